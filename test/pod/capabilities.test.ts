/**
 * Capabilities as the runtime on the pod's node reads them (issue 33 §5, src/pod/capabilities.ts): containerd
 * prefixes `CAP_` to every entry and matches exactly (1.6 pkg/cri/opts/spec_linux.go, 2.x internal/cri/opts
 * spec_opts.go `WithCapabilities`), CRI-O normalises the prefix (internal/factory/container `SpecSetupCapabilities`).
 * The real-node tier shows containerd's reading on 1.6.20 and 2.4.2 (S9, `drop-prefixed`).
 */
import { describe, expect, it } from 'vitest';
import {
  type CapabilityReading,
  capabilityReading,
  holdsCapability,
  namedCapability,
} from '../../src/pod/capabilities.ts';
import type { Container } from '../../src/contract/pod.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { podCapabilityReading } from '../../src/policy/escalation.ts';
import { cfg, facts, input, istioPod } from '../policy/mutate/fixtures.ts';

const c = (capabilities: Record<string, string[]>): Container => ({ name: 'x', securityContext: { capabilities } });

/** [case, container, capability, held under containerd, held under CRI-O] — strictest = either. */
const rows: Array<[string, Container, string, boolean, boolean]> = [
  ['the default set', { name: 'x' }, 'SETUID', true, true],
  ['not in the default set', { name: 'x' }, 'SYS_PTRACE', false, false],
  ['drop ALL', c({ drop: ['ALL'] }), 'SETUID', false, false],
  ['drop all (lower case)', c({ drop: ['all'] }), 'SETUID', false, false],
  ['drop ALL, add it back', c({ drop: ['ALL'], add: ['SETUID'] }), 'SETUID', true, true],
  ['add and drop the same: drop wins', c({ add: ['SETUID'], drop: ['SETUID'] }), 'SETUID', false, false],
  ['add ALL', c({ add: ['ALL'] }), 'SYS_PTRACE', true, true],
  ['add ALL, drop one', c({ add: ['ALL'], drop: ['SETUID'] }), 'SETUID', false, false],
  ['drop in lower case without prefix', c({ drop: ['setuid'] }), 'SETUID', false, false],
  // issue 33 §5: containerd drops CAP_CAP_SETUID, which nothing holds.
  ['drop CAP_SETUID', c({ drop: ['CAP_SETUID', 'CAP_SETGID', 'CAP_NET_RAW'] }), 'SETUID', true, false],
  ['drop cap_net_raw', c({ drop: ['cap_net_raw'] }), 'NET_RAW', true, false],
  ['add ALL, drop cap_setuid', c({ add: ['ALL'], drop: ['cap_setuid'] }), 'SETUID', true, false],
  // containerd adds CAP_CAP_NET_ADMIN, which runc ignores as unknown; CRI-O adds NET_ADMIN.
  ['add CAP_NET_ADMIN', c({ add: ['CAP_NET_ADMIN'] }), 'NET_ADMIN', false, true],
  ['drop ALL, add CAP_SETUID back', c({ drop: ['ALL'], add: ['CAP_SETUID'] }), 'SETUID', false, true],
];

describe('holdsCapability reads add and drop as the runtime on the node applies them', () => {
  it.each(rows)('%s', (_n, container, cap, containerd, crio) => {
    expect(holdsCapability(container, cap, 'containerd')).toBe(containerd);
    expect(holdsCapability(container, cap, 'crio')).toBe(crio);
    expect(holdsCapability(container, cap, 'strictest')).toBe(containerd || crio);
    expect(holdsCapability(container, cap)).toBe(containerd || crio);
  });
});

describe('namedCapability', () => {
  const cases: Array<[string, 'containerd' | 'crio', string | undefined]> = [
    ['SETUID', 'containerd', 'SETUID'],
    ['setuid', 'containerd', 'SETUID'],
    ['CAP_SETUID', 'containerd', undefined],
    ['Cap_SetUID', 'containerd', undefined],
    ['CAP_SETUID', 'crio', 'SETUID'],
    ['cap_setuid', 'crio', 'SETUID'],
    ['setuid', 'crio', 'SETUID'],
  ];
  it.each(cases)('%s under %s', (entry, runtime, named) => {
    expect(namedCapability(entry, runtime)).toBe(named);
  });
});

describe("capabilityReading: the Node's containerRuntimeVersion", () => {
  const cases: Array<[string | undefined, CapabilityReading]> = [
    ['containerd://1.6.20~ds1', 'containerd'],
    ['containerd://v2.4.2', 'containerd'],
    ['containerd://9.0.0', 'containerd'],
    ['cri-o://1.31.2', 'crio'],
    ['docker://24.0.7', 'strictest'],
    ['', 'strictest'],
    [undefined, 'strictest'],
  ];
  it.each(cases)('%s → %s', (version, reading) => {
    expect(capabilityReading(version)).toBe(reading);
  });
});

describe("restricted judges a root pod's `drop: [CAP_SETUID, CAP_SETGID, CAP_NET_RAW]` by its node's runtime", () => {
  const nodes = facts({
    ctrd: { verified: true, kubeletVersion: 'v1.34.1', containerRuntimeVersion: 'containerd://2.4.2' },
    crio: { verified: true, kubeletVersion: 'v1.34.1', containerRuntimeVersion: 'cri-o://1.33.1' },
    other: { verified: true, kubeletVersion: 'v1.34.1' },
  });
  const restricted = cfg('istio', { apps: { privileges: 'restricted', baselineNamespaces: [] } });
  const rootDropping = (nodeName?: string) => {
    const p = istioPod(nodeName ? { nodeName } : {});
    p.spec.containers[0].securityContext = {
      runAsUser: 0,
      runAsGroup: 0,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['CAP_SETUID', 'CAP_SETGID', 'CAP_NET_RAW'] },
    };
    return p;
  };
  it('refuses it bound to a containerd node, without a node, or on a node whose runtime is unknown', () => {
    for (const node of ['ctrd', undefined, 'other', 'not-in-cache']) {
      const p = rootDropping(node);
      const r = checkPosture(input(p), nodes, restricted);
      expect(r, String(node)).toMatchObject({ ok: false, reason: 'proxy_escalation' });
      expect(r.ok === false && r.message).toMatch(/holds SETUID, SETGID, NET_RAW/);
    }
  });
  it('does not count it against a pod bound to a CRI-O node (it drops them there)', () => {
    const p = rootDropping('crio');
    expect(podCapabilityReading(p, nodes)).toBe('crio');
    const r = checkPosture(input(p), nodes, restricted);
    expect(r.ok === false && r.reason === 'proxy_escalation').toBe(false);
  });
});

describe('node (the default) reads the SETUID a container adds by name as its node’s runtime does', () => {
  const nodes = facts({
    ctrd: { verified: true, kubeletVersion: 'v1.34.1', containerRuntimeVersion: 'containerd://2.4.2' },
    crio: { verified: true, kubeletVersion: 'v1.34.1', containerRuntimeVersion: 'cri-o://1.33.1' },
  });
  const node = cfg('istio', { apps: { privileges: 'node' } });
  /** drop ALL, then `add: [CAP_SETUID]`: containerd adds CAP_CAP_SETUID (a name runc ignores), CRI-O adds SETUID. */
  const addingPrefixed = (nodeName?: string) => {
    const p = istioPod(nodeName ? { nodeName } : {});
    p.spec.containers[0].securityContext = { capabilities: { drop: ['ALL'], add: ['CAP_SETUID'] } };
    return p;
  };
  it('refuses it on a CRI-O node and on a pod without a node (the strictest reading)', () => {
    for (const node_ of ['crio', undefined]) {
      const r = checkPosture(input(addingPrefixed(node_)), nodes, node);
      expect(r, String(node_)).toMatchObject({ ok: false, reason: 'proxy_escalation' });
      expect(r.ok === false && r.message).toMatch(/adds SETUID/);
    }
  });
  it('admits it bound to a containerd node, where it holds no SETUID at all', () => {
    expect(checkPosture(input(addingPrefixed('ctrd')), nodes, node)).toMatchObject({ ok: true });
  });
});
