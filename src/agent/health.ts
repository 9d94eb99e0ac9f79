/**
 * The node agent's probes, judged from where its loop stands (NodeAgent.status()). Pure, so each rule has a table
 * test (test/agent/health.test.ts).
 *
 * Liveness fails only when a restart would help: a reconcile that has hung (an API call that never returns; the
 * client bounds each attempt, src/kube/api/client.ts, so this is the backstop) or a loop that stopped running (no
 * attempt ended for two resync periods). An unreachable apiserver is not such a case: attempts keep ending (in
 * errors, retried with backoff), and a restart would only lose the backoff.
 *
 * Readiness says the Node carries this agent's current verdict: the last reconcile succeeded and none has been stuck
 * for long. A DaemonSet rollout counts unready pods against maxUnavailable, so a new version that cannot publish
 * stops the rollout.
 */
import type { AgentStatus } from './agent.ts';

export interface Probe {
  ok: boolean;
  why?: string;
}

/**
 * Twice the apiserver's default request timeout (60 s, --request-timeout): a call still open after that will not
 * come back, and the agent cannot publish until it is restarted.
 */
export const HUNG_AFTER_MS = 120_000;

/**
 * Attempts end at least once per resync (plus debounce and the reconcile itself), and more often while retrying;
 * none for two resync periods (plus the hang bound) means the timers stopped firing.
 */
/**
 * A reconcile normally takes well under a second (a directory read, a GET, at most two PATCHes); one still running
 * after half the apiserver's request timeout (60 s) is waiting on an apiserver that does not answer.
 */
export const SLOW_CHECK_MS = 30_000;

export function stalledAfterMs(resyncMs: number): number {
  return 2 * resyncMs + HUNG_AFTER_MS;
}

export function liveness(s: AgentStatus, now: number, startedAt: number): Probe {
  if (s.runningSince !== undefined && now - s.runningSince > HUNG_AFTER_MS) {
    const seconds = Math.round((now - s.runningSince) / 1000);
    return { ok: false, why: `a check has been running for ${seconds} s (an API call that does not return?)` };
  }
  const since = Math.max(s.lastAttemptAt, startedAt);
  if (s.runningSince === undefined && now - since > stalledAfterMs(s.resyncMs)) {
    const seconds = Math.round((now - since) / 1000);
    return { ok: false, why: `no check has ended for ${seconds} s (resync every ${s.resyncMs / 1000} s)` };
  }
  return { ok: true };
}

export function readiness(s: AgentStatus, now: number): Probe {
  if (s.runningSince !== undefined && now - s.runningSince > SLOW_CHECK_MS) {
    const seconds = Math.round((now - s.runningSince) / 1000);
    return { ok: false, why: `a check has been waiting for ${seconds} s (is the apiserver answering?)` };
  }
  if (s.lastAttemptAt === 0) return { ok: false, why: 'the first check has not finished' };
  if (s.lastError) return { ok: false, why: `the last check failed at ${s.lastError.step}: ${s.lastError.message}` };
  return { ok: true };
}
