/**
 * What one e2e file's tests share, declared once: `shared(start)` registers the file's beforeAll, which runs `start`,
 * and its afterAll, which stops everything `start` handed to `stopLater`, the last started first. A part is handed
 * over as soon as it runs, so a start that fails halfway still stops what it had started: a broken suite leaves no
 * apiserver, injector or server behind for the next file. Each file then says only what its cluster holds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** Something the set-up started: a harness component (stop), meshgate's server (shutdown), or a cleanup function. */
export type Stoppable = { stop(): unknown } | { shutdown(): unknown } | (() => unknown);

/** Hands `part` to the file's afterAll and returns it, so a start reads `const x = stopLater(await startX())`. */
export type StopLater = <T extends Stoppable>(part: T) => T;

/** The default budget of a file's set-up: a control plane alone needs up to 180 s on a busy 2-core box. */
export const SETUP_TIMEOUT_MS = 300_000;

/**
 * The object `start` resolves to, filled in when the file's beforeAll has run (read its fields inside tests and
 * hooks, never at the top level of the file). A `start` whose helpers need what it started before it returns keeps
 * that in the file's own variables and resolves to nothing.
 */
export function shared<T extends object>(start: (stopLater: StopLater) => Promise<T>, timeoutMs?: number): T;
export function shared(start: (stopLater: StopLater) => Promise<void>, timeoutMs?: number): void;
export function shared<T extends object>(
  start: (stopLater: StopLater) => Promise<T | undefined>,
  timeoutMs = SETUP_TIMEOUT_MS,
): T {
  const suite = {} as T;
  const parts: Stoppable[] = [];
  const stopLater: StopLater = (part) => {
    parts.push(part);
    return part;
  };
  beforeAll(async () => {
    Object.assign(suite, await start(stopLater));
  }, timeoutMs);
  afterAll(async () => {
    // Every part is stopped even when one fails to stop; the first failure is the file's.
    const failures: unknown[] = [];
    for (const part of parts.reverse()) {
      try {
        await stop(part);
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length) throw failures[0];
  });
  return suite;
}

function stop(part: Stoppable): unknown {
  if (typeof part === 'function') return part();
  return 'stop' in part ? part.stop() : part.shutdown();
}

/** A new directory in the system's temp dir (named `prefix` and a suffix), removed after the file's tests. */
export function scratchDir(stopLater: StopLater, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  stopLater(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
