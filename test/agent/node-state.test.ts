/** The Node contract: reading meshgate's marks back, "already says so", and the two patches. */
import type { Node as V1Node, Taint as V1Taint } from '../../src/kube/api/objects.ts';
import { describe, expect, it } from 'vitest';
import { CNI_ADVICE, CNI_REASONS } from '../../src/cni/reasons.ts';
import type { ChainVerdict } from '../../src/cni/types.ts';
import { verifyChain } from '../../src/cni/verify.ts';
import { planPatches } from '../../src/agent/node-patch.ts';
import {
  CONDITION_TYPE,
  desiredState,
  EVIDENCE_ANNOTATION,
  isUpToDate,
  observeNode,
  VERIFIED_LABEL,
} from '../../src/agent/node-state.ts';
import { corpus, memorySnapshot } from '../cni/helpers.ts';

const at = (iso: string) => () => new Date(iso);
const verified = verifyChain(
  memorySnapshot({ '10-calico.conflist': corpus('istio__10-calico.conflist-istioconfig') }),
  {
    runtime: 'containerd',
    libcni: '1.1',
    pluginType: 'istio-cni',
    maxConfNum: 1,
    now: at('2025-01-01T00:00:00.123Z'),
  },
);
const missing = verifyChain(memorySnapshot({ '10-calico.conflist': corpus('istio__calico.conflist') }), {
  runtime: 'containerd',
  libcni: '1.1',
  pluginType: 'istio-cni',
  maxConfNum: 1,
  now: at('2025-01-01T00:00:00Z'),
});
const later = (v: ChainVerdict): ChainVerdict => ({
  ...v,
  evidence: { ...v.evidence, checkedAt: '2030-01-01T00:00:00.000Z' },
});

function nodeSaying(v: ChainVerdict, extra: { taints?: V1Taint[] } = {}): V1Node {
  const want = desiredState(v, false);
  return {
    metadata: {
      name: 'n1',
      resourceVersion: '42',
      labels: { [VERIFIED_LABEL]: want.label! },
      annotations: { [EVIDENCE_ANNOTATION]: want.evidence! },
    },
    spec: { taints: extra.taints },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        {
          type: CONDITION_TYPE,
          status: want.condition!.status,
          reason: v.reason,
          message: v.message,
          lastTransitionTime: '2024-06-01T00:00:00Z',
        },
      ],
    },
  };
}

describe('observeNode / isUpToDate', () => {
  it('reads back what desiredState puts on a Node', () => {
    const seen = observeNode(nodeSaying(verified));
    expect(seen).toMatchObject({
      label: 'true',
      condition: { status: 'True', reason: 'verified', lastTransitionTime: '2024-06-01T00:00:00Z' },
      tainted: false,
    });
    expect(isUpToDate(seen, verified, false)).toBe(true);
  });

  it("reads the kubelet's containerRuntimeVersion, which decides the libcni line; an empty one is unknown", () => {
    const node = nodeSaying(verified);
    const withRuntime = (v: string) => ({
      ...node,
      status: { ...node.status, nodeInfo: { containerRuntimeVersion: v } },
    });
    expect(observeNode(withRuntime('containerd://2.1.4') as never).runtimeVersion).toBe('containerd://2.1.4');
    expect(observeNode(withRuntime('') as never).runtimeVersion).toBeUndefined();
  });

  it('a verdict judged by another libcni line is a change to publish', () => {
    const seen = observeNode(nodeSaying(verified));
    expect(isUpToDate(seen, { ...verified, evidence: { ...verified.evidence, libcni: '1.3' } }, false)).toBe(false);
  });

  it('ignores the evidence time: a restart re-deriving the same verdict writes nothing', () => {
    expect(isUpToDate(observeNode(nodeSaying(verified)), later(verified), false)).toBe(true);
  });

  it.each([
    { name: 'a node never judged', seen: observeNode({ metadata: { name: 'n' } }) },
    { name: 'nothing read', seen: undefined },
    { name: 'the verdict flipped', seen: observeNode(nodeSaying(missing)) },
    {
      name: 'the evidence changed (other file)',
      seen: { ...observeNode(nodeSaying(verified)), evidence: JSON.stringify({ ...verified.evidence, file: 'x' }) },
    },
    {
      name: 'the evidence annotation was removed',
      seen: { ...observeNode(nodeSaying(verified)), evidence: undefined },
    },
    { name: 'the label was edited', seen: { ...observeNode(nodeSaying(verified)), label: 'false' } },
    { name: 'a leftover taint on a verified node', seen: { ...observeNode(nodeSaying(verified)), tainted: true } },
  ])('is not up to date when $name', ({ seen }) => {
    expect(isUpToDate(seen, verified, false)).toBe(false);
  });

  it('wants the taint only when asked and unverified', () => {
    const seen = observeNode(nodeSaying(missing));
    expect(isUpToDate(seen, missing, false)).toBe(true);
    expect(isUpToDate(seen, missing, true)).toBe(false);
    expect(isUpToDate({ ...seen, tainted: true }, missing, true)).toBe(true);
  });
});

describe('planPatches', () => {
  const now = new Date('2025-02-03T04:05:06.789Z');

  it('keeps lastTransitionTime when the status does not change; heartbeat is now (seconds)', () => {
    const { node, status } = planPatches(nodeSaying(verified), verified, false, now);
    // A patch that makes the node verified carries the resourceVersion it was planned on (a withdrawal in between wins).
    expect(node).toEqual({
      metadata: {
        resourceVersion: '42',
        labels: { [VERIFIED_LABEL]: 'true' },
        annotations: { [EVIDENCE_ANNOTATION]: JSON.stringify(verified.evidence) },
      },
    });
    expect(status).toEqual({
      status: {
        conditions: [
          {
            type: CONDITION_TYPE,
            status: 'True',
            reason: 'verified',
            message: verified.message,
            lastHeartbeatTime: '2025-02-03T04:05:06Z',
            lastTransitionTime: '2024-06-01T00:00:00Z',
          },
        ],
      },
    });
  });

  it('moves lastTransitionTime when the status flips', () => {
    const { status } = planPatches(nodeSaying(verified), missing, false, now);
    expect(status).toMatchObject({
      status: {
        conditions: [{ status: 'False', reason: 'mesh_plugin_missing', lastTransitionTime: '2025-02-03T04:05:06Z' }],
      },
    });
  });

  it('adds the taint with a resourceVersion precondition, keeping other taints', () => {
    const other = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
    const { node } = planPatches(nodeSaying(verified, { taints: [other] }), missing, true, now);
    expect(node).toMatchObject({
      metadata: { resourceVersion: '42', labels: { [VERIFIED_LABEL]: 'false' } },
      spec: { taints: [other, { key: 'meshgate.io/cni-unverified', effect: 'NoSchedule' }] },
    });
  });

  it('removes the taint when verified (or when tainting is off)', () => {
    const ours = { key: 'meshgate.io/cni-unverified', effect: 'NoSchedule' };
    const other = { key: 'dedicated', effect: 'NoExecute', timeAdded: '2024-01-01T00:00:00Z' };
    expect(planPatches(nodeSaying(missing, { taints: [ours, other] }), verified, true, now).node).toMatchObject({
      spec: { taints: [{ key: 'dedicated', effect: 'NoExecute', timeAdded: '2024-01-01T00:00:00Z' }] },
    });
    expect(planPatches(nodeSaying(missing, { taints: [ours] }), missing, false, now).node).toMatchObject({
      spec: { taints: [] },
    });
  });

  it('leaves spec and resourceVersion out when the taint is already right', () => {
    const { node } = planPatches(nodeSaying(missing), missing, false, now);
    expect(node).not.toHaveProperty('spec');
    expect(node.metadata).not.toHaveProperty('resourceVersion');
  });

  it.each(Object.keys(CNI_REASONS))('reason code %s is a valid Kubernetes condition reason', (code) => {
    expect(code).toMatch(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/);
    expect(CNI_ADVICE[code as keyof typeof CNI_REASONS]).toBeTruthy();
  });
});
