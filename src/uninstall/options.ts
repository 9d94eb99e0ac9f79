/**
 * What the steps of `meshgate uninstall` (run.ts, leftovers.ts) share: the options, how long a deleted admission
 * policy may still refuse, and the error that stops a run with its reason.
 */
import type { ReleaseNames } from './plan.ts';

export interface UninstallOptions {
  names: ReleaseNames;
  dryRun: boolean;
  /** How long to wait for meshgate's pods to be gone. */
  timeoutMs: number;
  /** Remove the namespaces' label meshgate.io/enforcement too (default: keep it, and say so). */
  removeEnforcementLabels?: boolean;
  pollMs: number;
  out(line: string): void;
  sleep?(ms: number): Promise<void>;
  now?(): number;
}

/**
 * A deleted admission policy still refuses for a moment (the apiserver's policy cache); longer, and it is another
 * release's policy that still holds (two meshgate releases share the Node keys).
 */
export const POLICY_GRACE_MS = 30_000;

export const sleeper = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Stops the run: its message is the reason printed. */
export class Stop extends Error {}
