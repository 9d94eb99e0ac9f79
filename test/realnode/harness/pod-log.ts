// Follows a container's log files on its node, as the kubelet writes them (CRI format, one file per start:
// <podLogsDir>/<namespace>_<pod>_<uid>/<container>/<restart>.log), keeping each file open: when the pod is deleted the
// kubelet removes the files, and an open descriptor still reads what was written. So a harness sees every line an
// app printed before something killed it and removed its pod — which `kubectl logs` cannot show any more.
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { RealNode } from './node.ts';

export interface LogLine {
  /** When the runtime wrote it (the CRI timestamp), ms since the epoch. */
  at: number;
  /** Which start of the container (0.log, 1.log, …). */
  restart: number;
  text: string;
}

/** 100 ms: an app streaming a line per 100 ms loses nothing, and the reads are a few syscalls. */
const POLL_MS = 100;
const CHUNK = 64 * 1024;

export class PodLogTail {
  readonly lines: LogLine[] = [];
  readonly #dir: string;
  readonly #files = new Map<string, { fd: number; offset: number; partial: string }>();
  readonly #buffer = Buffer.alloc(CHUNK);
  #timer: NodeJS.Timeout | undefined;

  constructor(node: RealNode, pod: { namespace: string; name: string; uid: string }, container: string) {
    this.#dir = join(node.kubelet.podLogsDir, `${pod.namespace}_${pod.name}_${pod.uid}`, container);
    this.#timer = setInterval(() => this.read(), POLL_MS);
  }

  /** Reads what was appended since the last read (the timer calls it; a caller may too, before judging). */
  read(): void {
    let names: string[] = [];
    try {
      names = readdirSync(this.#dir).filter((n) => /^\d+\.log$/.test(n));
    } catch {
      // not created yet, or removed with the pod: the open files still read
    }
    for (const n of names)
      if (!this.#files.has(n)) {
        try {
          this.#files.set(n, { fd: openSync(join(this.#dir, n), 'r'), offset: 0, partial: '' });
        } catch {
          // removed between the listing and the open
        }
      }
    for (const [name, f] of this.#files) {
      for (;;) {
        const got = readSync(f.fd, this.#buffer, 0, CHUNK, f.offset);
        if (got === 0) break;
        f.offset += got;
        const text = f.partial + this.#buffer.toString('utf8', 0, got);
        const parts = text.split('\n');
        f.partial = parts.pop() ?? '';
        for (const raw of parts) this.#add(raw, Number.parseInt(name, 10));
      }
    }
  }

  /** `2026-11-28T18:00:00.123456789Z stdout F {...}` → a line; partial (P) records are joined by the runtime's F. */
  #add(raw: string, restart: number): void {
    const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/.exec(raw);
    if (!m) return;
    this.lines.push({ at: Date.parse(m[1]), restart, text: m[4] });
  }

  /** The JSON lines the app printed, with their times. */
  json<T>(): { at: number; restart: number; value: T }[] {
    const out: { at: number; restart: number; value: T }[] = [];
    for (const l of this.lines) {
      if (!l.text.startsWith('{')) continue;
      try {
        out.push({ at: l.at, restart: l.restart, value: JSON.parse(l.text) as T });
      } catch {
        // not one of the app's lines
      }
    }
    return out;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.read();
    for (const f of this.#files.values()) closeSync(f.fd);
    this.#files.clear();
  }
}
