/**
 * Class 10, who may call a node verified: only the node agent's published verdict counts — the MeshCNIVerified
 * condition True with evidence naming the configured plugin — never a label alone, which a kubelet sets at
 * registration and anyone with node patch can set.
 */
import { describe, expect, it } from 'vitest';
import { factFromNode, NodeFactStore } from '../../src/facts/node-facts.ts';

const evidence = (pluginType: string) =>
  JSON.stringify({
    runtime: 'containerd',
    pluginType,
    file: '10-calico.conflist',
    plugins: ['calico', pluginType],
    candidates: [],
    checkedAt: '2026-11-23T00:00:00Z',
  });
const node = (
  labels: Record<string, string>,
  cond?: { status: string; reason?: string; message?: string; lastHeartbeatTime?: string },
  annotations: Record<string, string> = {},
) => ({
  metadata: { name: 'n1', labels, annotations },
  status: {
    conditions: cond
      ? [
          { type: 'Ready', status: 'True' },
          { type: 'MeshCNIVerified', ...cond },
        ]
      : [{ type: 'Ready', status: 'True' }],
    nodeInfo: { kubeletVersion: 'v1.34.2' },
  },
});
const expect_ = { pluginType: 'istio-cni', maxVerdictAgeMs: 20 * 60_000 };
const NOW = Date.parse('2026-11-23T00:10:00Z');

describe("a node is verified only by the agent's published verdict", () => {
  it.each([
    [
      'label true without any condition (set by a kubelet or anyone with node patch)',
      node({ 'meshgate.io/cni-verified': 'true' }),
      'condition_missing',
    ],
    ['nothing published', node({}), 'not_published'],
    [
      "condition False with the agent's reason",
      node(
        { 'meshgate.io/cni-verified': 'false' },
        { status: 'False', reason: 'mesh_plugin_missing', message: 'chain is calico' },
      ),
      'mesh_plugin_missing',
    ],
    [
      'condition True but the label says false',
      node(
        { 'meshgate.io/cni-verified': 'false' },
        { status: 'True', reason: 'verified' },
        { 'meshgate.io/cni-evidence': evidence('istio-cni') },
      ),
      'label_mismatch',
    ],
    [
      'condition True without evidence',
      node({ 'meshgate.io/cni-verified': 'true' }, { status: 'True', reason: 'verified' }),
      'evidence_missing',
    ],
    [
      'condition True, evidence not JSON',
      node(
        { 'meshgate.io/cni-verified': 'true' },
        { status: 'True', reason: 'verified' },
        { 'meshgate.io/cni-evidence': 'yes' },
      ),
      'evidence_missing',
    ],
    [
      'verified for linkerd-cni while meshgate guards Istio',
      node(
        { 'meshgate.io/cni-verified': 'true' },
        { status: 'True', reason: 'verified' },
        { 'meshgate.io/cni-evidence': evidence('linkerd-cni') },
      ),
      'plugin_mismatch',
    ],
  ] as const)('%s → not verified (%s)', (_n, n, reason) => {
    const f = factFromNode(n, expect_, NOW);
    expect(f).toMatchObject({ verified: false, reason });
    expect(f.message.length).toBeGreaterThan(10);
  });

  it('condition True, label true, evidence for the configured plugin → verified', () => {
    const f = factFromNode(
      node(
        { 'meshgate.io/cni-verified': 'true' },
        {
          status: 'True',
          reason: 'verified',
          message: 'chain is calico → istio-cni',
          lastHeartbeatTime: '2026-11-23T00:05:00Z',
        },
        { 'meshgate.io/cni-evidence': evidence('istio-cni') },
      ),
      expect_,
      NOW,
    );
    expect(f).toEqual({
      name: 'n1',
      verified: true,
      reason: 'verified',
      message: 'chain is calico → istio-cni',
      kubeletVersion: 'v1.34.2',
      heartbeatAt: Date.parse('2026-11-23T00:05:00Z'),
    });
  });

  describe('a verdict judged by a libcni line holds only while the node runs a runtime of that line', () => {
    const judged = (libcni: string, runtimeVersion: string | undefined, reported: string) => {
      const n = node(
        { 'meshgate.io/cni-verified': 'true' },
        { status: 'True', reason: 'verified', lastHeartbeatTime: '2026-11-23T00:05:00Z' },
        {
          'meshgate.io/cni-evidence': JSON.stringify({
            ...JSON.parse(evidence('istio-cni')),
            libcni,
            ...(runtimeVersion ? { runtimeVersion } : {}),
          }),
        },
      );
      return factFromNode(
        { ...n, status: { ...n.status, nodeInfo: { containerRuntimeVersion: reported } } },
        expect_,
        NOW,
      );
    };

    it.each([
      ['1.1', 'containerd://1.7.27', 'containerd://1.7.28', true],
      ['1.1', 'containerd://1.7.27', 'containerd://2.1.4', false],
      ['1.3', 'containerd://2.1.4', 'containerd://2.4.0', true],
      ['1.3', 'containerd://2.1.4', 'containerd://9.0.0', false],
      ['1.2', 'cri-o://1.31.2', 'cri-o://1.30.9', false],
      ['all', 'containerd://9.0.0', 'containerd://1.7.0', true],
      ['1.2', undefined, 'cri-o://1.36.0', true],
      // The evidence's runtime is containerd: a CRI-O of the same line is another runtime.
      ['1.1', 'containerd://1.7.27', 'cri-o://1.30.2', false],
    ] as const)('libcni %s under %s, the node now reports %s → verified %s', (libcni, at, now, verified) => {
      const f = judged(libcni, at, now);
      expect(f.verified).toBe(verified);
      if (!verified) {
        expect(f.reason).toBe('runtime_changed');
        expect(f.message).toContain(`the node reports ${now}`);
      }
    });
  });

  it('a verdict the agent stopped re-confirming goes stale: at read time, and in the store as time passes', () => {
    const n = node(
      { 'meshgate.io/cni-verified': 'true' },
      { status: 'True', reason: 'verified', lastHeartbeatTime: '2026-11-23T00:05:00Z' },
      { 'meshgate.io/cni-evidence': evidence('istio-cni') },
    );
    expect(factFromNode(n, expect_, NOW + 30 * 60_000)).toMatchObject({
      verified: false,
      reason: 'stale_verdict',
      message: expect.stringMatching(/last heartbeat 2100 s ago/),
    });
    const noBeat = node(
      { 'meshgate.io/cni-verified': 'true' },
      { status: 'True', reason: 'verified' },
      { 'meshgate.io/cni-evidence': evidence('istio-cni') },
    );
    expect(factFromNode(noBeat, expect_, NOW)).toMatchObject({ verified: false, reason: 'stale_verdict' });
    const store = new NodeFactStore();
    store.upsert(factFromNode(n, expect_, NOW));
    expect(store.anyVerified()).toBe(true);
    expect(store.expireStale(expect_.maxVerdictAgeMs, NOW + 5 * 60_000)).toBe(0);
    expect(store.expireStale(expect_.maxVerdictAgeMs, NOW + 16 * 60_000)).toBe(1);
    expect(store.get('n1')).toMatchObject({ verified: false, reason: 'stale_verdict' });
    expect(store.anyVerified()).toBe(false);
  });
});
