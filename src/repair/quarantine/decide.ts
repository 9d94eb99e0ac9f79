/**
 * What to do next with a withdrawn node, from what its Node object says and what its probe pod says. Pure: the
 * controller (src/repair/quarantine/quarantine.ts) reads both, asks, and acts. The node is given back only when
 *   1. its hold (src/repair/failed/hold-off.ts) is over;
 *   2. its node agent re-verified it after the last failure: condition reason `node_quarantined` (the agent's own
 *      verdict is verified; an unverified one keeps its own reason) with a heartbeat later than both the withdrawal
 *      and the last failure — the agent's clock, to seconds;
 *   3. a probe pod created after that passed validation on it.
 */
import type { NodeView } from './node-view.ts';
import type { ProbeResult } from './probe-pod.ts';
import { QUARANTINE_REASON } from '../../node/quarantine.ts';

export interface ProbeView {
  /** ms since the epoch */
  createdAt: number;
  deleting: boolean;
  result: ProbeResult;
}

export type QuarantineStep =
  /** The node carries no mark: nothing to give back (a leftover probe is removed). */
  | { do: 'none' }
  /** The mark is unreadable: write a fresh one (only meshgate writes it, so it was damaged). */
  | { do: 'rewrite_mark' }
  /** The mark stands but the label or condition says verified: withdraw them again. */
  | { do: 'reassert' }
  | { do: 'hold'; until: number }
  | { do: 'await_agent'; after: number; why: string }
  | { do: 'create_probe' }
  | { do: 'wait_probe' }
  | { do: 'cancel_probe'; why: string }
  | { do: 'release' }
  | { do: 'probe_failed'; reason: string; detail: string }
  | { do: 'probe_inconclusive'; detail: string };

export interface DecideOptions {
  /** A probe still running after this is given up (inconclusive). */
  probeTimeoutMs: number;
}

export function decideQuarantine(
  node: NodeView,
  probe: ProbeView | undefined,
  now: number,
  o: DecideOptions,
): QuarantineStep {
  const cancel = (why: string): QuarantineStep =>
    probe && !probe.deleting ? { do: 'cancel_probe', why } : { do: 'none' };
  if (!node.mark) return cancel('the node is no longer withdrawn');
  if (!node.mark.ok) return { do: 'rewrite_mark' };
  const mark = node.mark.mark;
  if (node.label === 'true' || node.condition?.status === 'True') return { do: 'reassert' };
  const holdUntil = Date.parse(mark.holdUntil);
  if (now < holdUntil) return probe && !probe.deleting ? cancel('the node is held') : { do: 'hold', until: holdUntil };
  const after = Math.max(Date.parse(mark.since), Date.parse(mark.lastFailureAt));
  const c = node.condition;
  if (c?.reason !== QUARANTINE_REASON || c.heartbeatAt === undefined || c.heartbeatAt <= after) {
    const why =
      c?.reason !== QUARANTINE_REASON
        ? `the node agent's verdict is ${c?.reason ?? 'missing'}, not verified`
        : 'the node agent has not re-verified the node since the last failure';
    return probe && !probe.deleting ? cancel(why) : { do: 'await_agent', after, why };
  }
  if (!probe) return { do: 'create_probe' };
  if (probe.deleting) return { do: 'wait_probe' };
  // A probe from before the last failure proves nothing about the node since.
  if (probe.createdAt <= after) return { do: 'cancel_probe', why: 'the probe started before the last failure' };
  const r = probe.result;
  if (r.state === 'passed') return { do: 'release' };
  if (r.state === 'failed') return { do: 'probe_failed', reason: r.reason, detail: r.detail };
  if (r.state === 'inconclusive') return { do: 'probe_inconclusive', detail: r.detail };
  if (now - probe.createdAt > o.probeTimeoutMs)
    return {
      do: 'probe_inconclusive',
      detail: `the probe did not finish within ${Math.round(o.probeTimeoutMs / 1000)} s`,
    };
  return { do: 'wait_probe' };
}
