import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import { checkPosture } from '../../src/policy/posture.ts';
import { checkBinding } from '../../src/policy/binding.ts';
import { decide } from '../../src/inject/decide.ts';
import type { Pod } from '../../src/inject/pod.ts';
import { cfg, enabledNs, facts, pod } from '../inject/fixtures.ts';

const nodes = facts({ good: { verified: true, kubeletVersion: 'v1.34.1' }, bad: { verified: false, reason: 'mesh_plugin_missing' } });

function injected(p: Pod, c = cfg()): Pod {
  const d = decide({ pod: p, namespace: enabledNs }, nodes, c);
  if (d.kind !== 'patch') throw new Error(d.kind);
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(d.ops) as jsonpatch.Operation[], true, false).newDocument;
}

const without = (p: Pod, name: string): Pod => ({
  ...p,
  spec: { ...p.spec, containers: p.spec.containers.filter((c) => c.name !== name), initContainers: p.spec.initContainers?.filter((c) => c.name !== name) },
});

describe('final posture', () => {
  it('accepts what the mutating webhook produced, in every mode', () => {
    for (const c of [cfg(), cfg({ redirect: { mode: 'off' } }), cfg({ injection: { nativeSidecar: 'off' } })]) {
      expect(checkPosture({ pod: injected(pod(), c), namespace: enabledNs }, nodes, c)).toMatchObject({ ok: true, reason: 'ok' });
    }
  });

  it('accepts skipped pods (opt-out, other namespaces, hostNetwork)', () => {
    expect(checkPosture({ pod: pod({ hostNetwork: true }), namespace: enabledNs }, nodes, cfg())).toMatchObject({ ok: true, reason: 'host_network' });
    expect(checkPosture({ pod: pod(), namespace: { name: 'x', labels: {} } }, nodes, cfg())).toMatchObject({ ok: true, reason: 'namespace_not_enabled' });
  });

  const cases: Array<[string, () => Pod, string, RegExp]> = [
    ['no proxy (mutating webhook skipped)', () => pod(), 'proxy_missing', /no proxy container/],
    ['proxy but validator removed by another webhook', () => without(injected(pod()), 'meshgate-validate'), 'redirect_missing', /no redirect/],
    ['status lists a container that is gone', () => {
      const p = injected(pod({ nodeName: 'bad' }), cfg({ redirect: { onUnverifiedNode: 'validate' } }));
      return without(p, 'meshgate-validate');
    }, 'status_mismatch', /lists meshgate-validate/],
    ['status claims CNI mode, spec has the privileged init', () => {
      const p = injected(pod(), cfg({ redirect: { mode: 'off' } }));
      p.metadata!.annotations!['meshgate.io/status'] = p.metadata!.annotations!['meshgate.io/status'].replace('"mode":"init"', '"mode":"cni"');
      return p;
    }, 'status_mismatch', /claims cni mode/],
    ['label claims CNI mode, spec is init mode', () => {
      const p = injected(pod(), cfg({ redirect: { mode: 'off' } }));
      p.metadata!.labels!['meshgate.io/redirect'] = 'cni';
      return p;
    }, 'status_mismatch', /label meshgate\.io\/redirect=cni/],
    ['status annotation that is not JSON', () => {
      const p = injected(pod());
      p.metadata!.annotations!['meshgate.io/status'] = 'yes';
      return p;
    }, 'status_mismatch', /not JSON/],
    ['CNI-mode pod pre-bound to an unverified node', () => ({ ...injected(pod()), spec: { ...injected(pod()).spec, nodeName: 'bad' } }), 'node_unverified', /node bad has no verified CNI chain \(mesh_plugin_missing/],
  ];
  it.each(cases)('denies: %s', (_n, make, reason, message) => {
    const r = checkPosture({ pod: make(), namespace: enabledNs }, nodes, cfg());
    expect(r).toMatchObject({ ok: false, reason });
    expect(!r.ok && r.message).toMatch(message);
  });

  it('onUnverifiedNode=validate admits a pre-bound CNI pod with a warning', () => {
    const p = { ...injected(pod()), spec: { ...injected(pod()).spec, nodeName: 'bad' } };
    const r = checkPosture({ pod: p, namespace: enabledNs }, nodes, cfg({ redirect: { onUnverifiedNode: 'validate' } }));
    expect(r.ok && r.warnings[0]).toMatch(/node bad has no verified CNI chain/);
  });

  it('accepts an Istio CNI-mode pod (recognised proxy and istio-validation)', () => {
    const p = pod({ initContainers: [{ name: 'istio-validation' }], containers: [{ name: 'app' }, { name: 'istio-proxy' }] });
    expect(checkPosture({ pod: p, namespace: enabledNs }, nodes, cfg())).toMatchObject({ ok: true });
  });

  it('accepts an Istio-injected pod (recognised proxy and init)', () => {
    const p = pod({ initContainers: [{ name: 'istio-init' }], containers: [{ name: 'app' }, { name: 'istio-proxy' }] });
    expect(checkPosture({ pod: p, namespace: enabledNs }, nodes, cfg({ injection: { enabled: false } })).ok).toBe(true);
  });
});

describe('binding guard', () => {
  it.each([
    ['cni pod to verified node', 'cni', 'good', true],
    ['cni pod to unverified node', 'cni', 'bad', false],
    ['cni pod to unknown node', 'cni', 'ghost', false],
    ['init pod to unverified node', 'init', 'bad', true],
    ['unlabelled pod', undefined, 'bad', true],
  ])('%s', (_n, mode, node, ok) => {
    const r = checkBinding('demo/web', node, mode, nodes);
    expect(r.ok).toBe(ok);
    if (!r.ok) expect(r.message).toMatch(new RegExp(`node ${node}`));
  });
});
