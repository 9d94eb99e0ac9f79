/**
 * Which pods meshgate holds Pending (src/policy/mutate/held.ts): unscheduled, in CNI mode with meshgate's verified-node
 * affinity (its status annotation says so), and unschedulable by the scheduler's own condition; and the message
 * that says what they wait for and what to do.
 */
import { describe, expect, it } from 'vitest';
import { heldMessage, heldPending } from '../../../src/policy/mutate/held.ts';
import type { InjectionStatus } from '../../../src/policy/status.ts';

const status = (o: Partial<InjectionStatus> = {}): string =>
  JSON.stringify({
    version: 1,
    mode: 'cni',
    reason: 'affinity_verified',
    nativeSidecar: true,
    initContainers: ['istio-validation'],
    containers: [],
    volumes: [],
    affinity: true,
    ...o,
  });
const unschedulable = {
  type: 'PodScheduled',
  status: 'False',
  reason: 'Unschedulable',
  message: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
};
const pending = (
  annotation: string | undefined,
  o: { nodeName?: string; phase?: string; conditions?: unknown[] } = {},
) => ({
  metadata: { annotations: annotation === undefined ? {} : { 'meshgate.io/status': annotation } },
  spec: { nodeName: o.nodeName },
  status: { phase: o.phase ?? 'Pending', conditions: o.conditions ?? [unschedulable] },
});

describe('held pods', () => {
  it('a pod pinned to verified nodes that the scheduler cannot place', () => {
    const h = heldPending(pending(status()));
    expect(h).toEqual({ reason: 'affinity_verified', node: undefined, scheduler: unschedulable.message });
    const m = heldMessage(h!);
    expect(m).toMatch(/^meshgate holds this pod Pending: .* pinned to nodes with a verified CNI chain/);
    expect(m).toContain('[affinity_verified]');
    expect(m).toContain('kubectl get nodes -L meshgate.io/cni-verified');
    expect(m).toMatch(/The scheduler says: 0\/2 nodes are available/);
  });

  it('a DaemonSet’s pod waiting for its own node', () => {
    const h = heldPending(pending(status({ reason: 'node_unverified_wait', node: 'node-b' })));
    expect(h).toMatchObject({ reason: 'node_unverified_wait', node: 'node-b' });
    expect(heldMessage(h!)).toMatch(
      /pinned to node node-b \(a DaemonSet's pod\), whose CNI chain is not verified.*`kubectl get node node-b -L meshgate\.io\/cni-verified`/,
    );
  });

  it.each<[string, unknown]>([
    ['scheduled', pending(status(), { nodeName: 'node-a' })],
    ['running', pending(status(), { phase: 'Running' })],
    ['not yet judged by the scheduler', pending(status(), { conditions: [] })],
    [
      'scheduling gated, not unschedulable',
      pending(status(), { conditions: [{ ...unschedulable, reason: 'SchedulingGated' }] }),
    ],
    ['init mode', pending(status({ mode: 'init', affinity: false }))],
    ['CNI mode on a known node, no affinity', pending(status({ affinity: false, reason: 'node_verified' }))],
    ['no meshgate status', pending(undefined)],
    ['an unreadable status', pending('{not json')],
    ['not a pod', undefined],
  ])('not held: %s', (_why, pod) => {
    expect(heldPending(pod)).toBeUndefined();
  });
});
