/**
 * Class 6, every way a pod gets a node: the binding guard judges what the pod needs from its spec, never from a
 * label its author can remove, and refuses bindings of CNI-mode pods to unverified nodes and of unmeshed pods.
 */
import { describe, expect, it } from 'vitest';
import { checkBinding, redirectNeed } from '../../../src/policy/validate/binding.ts';
import { validate } from '../../../src/admission/validate.ts';
import type { AdmissionRequest } from '../../../src/admission/review.ts';
import type { PodNeeds } from '../../../src/kube/pod-mode-cache.ts';
import { cfg, istio, istioPod, pod, verified } from '../mutate/fixtures.ts';
import jsonpatch from 'fast-json-patch';
import { decide } from '../../../src/policy/mutate/decide.ts';
import type { Pod } from '../../../src/contract/pod.ts';
import { bindingRequest } from '../../http/reviews.ts';

describe('what a pod needs from its node, from its spec', () => {
  const c = cfg('istio');
  it.each([
    ['Istio-injected (istio-init)', istioPod(), 'init'],
    ['CNI mode (validator)', istioPod({ initContainers: [c.validator as never] }), 'cni'],
    [
      "CNI mode without meshgate's label (removed by its author)",
      {
        ...istioPod({ initContainers: [c.validator as never] }),
        metadata: { name: 'w', annotations: { 'sidecar.istio.io/status': istio.status } },
      },
      'cni',
    ],
    ['no proxy at all', pod(), 'unmeshed'],
    [
      'look-alike containers: refused by its own reason',
      pod({ initContainers: [{ name: 'istio-init', image: 'busybox' }] }),
      'refused:impostor_container',
    ],
    ['system namespace', pod(), 'exempt'],
  ] as const)('%s → %s', (name, p, want) => {
    expect(redirectNeed(p as never, name === 'system namespace' ? 'kube-system' : 'demo', c)).toBe(want);
  });

  it('an Istio ambient pod as meshgate admits it (its ambient validator first) needs a verified node', () => {
    const ambient = cfg('istio', { ambient: { enabled: true } });
    const created = pod({}, { name: 'web', namespace: 'demo' });
    const d = decide(
      { pod: created, namespace: 'demo', namespaceLabels: { 'istio.io/dataplane-mode': 'ambient' } },
      verified,
      ambient,
    );
    if (d.kind !== 'patch') throw new Error(`expected a patch, got ${JSON.stringify(d)}`);
    const admitted = jsonpatch.applyPatch(structuredClone(created), d.ops, true, false).newDocument as Pod;
    expect(redirectNeed(admitted, 'demo', ambient)).toBe('cni');
    // The same spec with ambient off, or with the validator moved behind another init container: nothing to rely on.
    expect(redirectNeed(admitted, 'demo', cfg('istio'))).toMatch(/^(unmeshed|refused:)/);
    const [validator] = admitted.spec.initContainers ?? [];
    const behind = {
      ...admitted,
      spec: { ...admitted.spec, initContainers: [{ name: 'first', image: 'busybox' }, validator] },
    };
    expect(redirectNeed(behind as Pod, 'demo', ambient)).toMatch(/^(unmeshed|refused:)/);
  });

  it('the decision per need and node', () => {
    expect(checkBinding('demo/w', 'bad', 'cni', verified)).toMatchObject({
      ok: false,
      reason: 'binding_node_unverified',
    });
    expect(checkBinding('demo/w', 'good', 'cni', verified)).toMatchObject({ ok: true });
    expect(checkBinding('demo/w', 'bad', 'init', verified)).toMatchObject({ ok: true, reason: 'init_mode' });
    expect(checkBinding('demo/w', 'good', 'unmeshed', verified)).toMatchObject({
      ok: false,
      reason: 'binding_unmeshed',
    });
    // A pod meshgate's rules refuse (admitted at audit, say) keeps its own reason: one per pod, and a true message.
    const refused = checkBinding('demo/w', 'good', 'refused:proxy_escalation', verified);
    expect(refused).toMatchObject({ ok: false, reason: 'proxy_escalation' });
    expect(!refused.ok && refused.message).toMatch(
      /^pod demo\/w is refused by meshgate's rules \(proxy_escalation: a container other than the mesh's could run as/,
    );
    expect(!refused.ok && refused.message).not.toContain('no real mesh proxy');
    expect(checkBinding('demo/w', 'nowhere', 'cni', verified)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/node_not_found/),
    });
  });
});

function bindingTo(kind: 'subresource' | 'legacy', node: string): AdmissionRequest {
  const object = {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: 'w', namespace: 'demo' },
    target: { apiVersion: 'v1', kind: 'Node', name: node },
  };
  return bindingRequest('1', object, kind === 'legacy');
}

describe('both binding endpoints go through the guard', () => {
  const c = cfg('istio');
  const fixed = (need: 'cni' | 'init'): PodNeeds => ({ get: () => need, fetch: async () => need });
  it.each(['subresource', 'legacy'] as const)(
    '%s: CNI pod to an unverified node refused, to a verified one allowed',
    async (kind) => {
      expect(
        await validate(bindingTo(kind, 'bad'), { config: c, nodes: verified, podNeeds: fixed('cni') }),
      ).toMatchObject({ kind: 'deny', reason: 'binding_node_unverified' });
      expect(
        await validate(bindingTo(kind, 'good'), { config: c, nodes: verified, podNeeds: fixed('cni') }),
      ).toMatchObject({ kind: 'allow' });
      expect(
        await validate(bindingTo(kind, 'bad'), { config: c, nodes: verified, podNeeds: fixed('init') }),
      ).toMatchObject({ kind: 'allow', reason: 'init_mode' });
    },
  );

  it('a pod the cache does not know is read once and judged from its spec', async () => {
    let gets = 0;
    const needs: PodNeeds = {
      get: () => undefined,
      fetch: async () => {
        gets++;
        return redirectNeed(istioPod({ initContainers: [c.validator as never] }), 'demo', c);
      },
    };
    expect(await validate(bindingTo('legacy', 'bad'), { config: c, nodes: verified, podNeeds: needs })).toMatchObject({
      kind: 'deny',
    });
    expect(gets).toBe(1);
  });
});
