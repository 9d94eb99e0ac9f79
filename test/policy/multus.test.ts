/**
 * The OpenShift model (cni.multusNetwork) and Multus' pod annotations (src/policy/multus.ts): the annotation read as
 * multus-cni v4.2.3 reads it (compared with Multus' own TryLoadPodDelegates through the Multus oracle), the network
 * added in CNI mode (once: the patch is idempotent), refused when missing, and a pod naming its own default network
 * kept off the CNI path.
 */
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { decide, type Decision } from '../../src/policy/mutate/decide.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { checkUpdate } from '../../src/policy/validate/update.ts';
import { NETWORKS_ANNOTATION, parseNetworks } from '../../src/policy/multus.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { corpusPod } from '../support/corpus.ts';
import { cfg, input, istioPod, pod, verified } from './mutate/fixtures.ts';
import { resolveWithMultus } from '../cni/multus-oracle.ts';
import { corpus } from '../cni/helpers.ts';

const NETWORK = 'default/istio-cni';
const openshift = cfg('istio', { cni: { multusNetwork: NETWORK } });
const custom = cfg('custom', { cni: { multusNetwork: NETWORK } });

function apply(p: Pod, d: Decision): Pod {
  if (d.kind !== 'patch')
    throw new Error(`expected a patch, got ${d.kind}${d.kind === 'deny' ? `: ${d.message}` : ''}`);
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(d.ops) as jsonpatch.Operation[], true, false)
    .newDocument;
}

describe('parseNetworks reads k8s.v1.cni.cncf.io/networks as Multus does', () => {
  // [value, what it selects in namespace "shop" (or "error")]
  const CASES: Array<[string, Array<[string, string]> | 'error']> = [
    ['istio-cni', [['shop', 'istio-cni']]],
    ['default/istio-cni', [['default', 'istio-cni']]],
    [
      'macvlan-conf, default/istio-cni@net2',
      [
        ['shop', 'macvlan-conf'],
        ['default', 'istio-cni'],
      ],
    ],
    [' default / istio-cni ', [['default', 'istio-cni']]],
    ['alt_cni', 'error'], // Istio's own test annotation: "_" is not in a DNS label
    ['Default/istio-cni', 'error'],
    ['a/b/c', 'error'],
    ['a@b@c', 'error'],
    ['istio-cni@averyveryverylongname', 'error'],
    ['[{"name":"istio-cni","namespace":"default"}]', [['default', 'istio-cni']]],
    [
      '[{"name": "alt_cni"}, {"name": "more_cni", "namespace": "kube-system"}]',
      [
        ['shop', 'alt_cni'],
        ['kube-system', 'more_cni'],
      ],
    ],
    ['[{"NAME":"x","name":"istio-cni","Namespace":"default"}]', [['default', 'istio-cni']]], // Go: the last key wins
    ['[{"name":"istio-cni","namespace":"default","name":"decoy"}]', [['default', 'decoy']]],
    ['{"name":"istio-cni"}', 'error'],
    ['[{"name":1}]', 'error'],
    ['"default/istio-cni"', 'error'],
  ];

  const results = new Map(
    resolveWithMultus(
      CASES.map(([value, want], i) => ({
        id: String(i),
        conf: corpus('multus__70-multus.conf'),
        pod: { namespace: 'shop', networks: value },
        nads: (want === 'error' ? [] : want).map(([namespace, name]) => ({
          namespace,
          name,
          config: '{"cniVersion":"0.3.1","type":"bridge"}',
        })),
      })),
    ).map((r) => [r.id, r]),
  );

  it.each(CASES.map(([value, want], i) => ({ value, want, i })))('$value', ({ value, want, i }) => {
    const multus = results.get(String(i));
    const ours = parseNetworks(value, 'shop');
    if (want === 'error') {
      expect(typeof ours).toBe('string');
      expect(multus?.error, 'Multus refuses it too').toBeTruthy();
      return;
    }
    expect(ours).toEqual(want.map(([namespace, name]) => ({ namespace, name })));
    expect(multus?.error).toBeUndefined();
    expect(multus?.delegates?.slice(1).map((d) => d.name)).toEqual(want.map(([ns, name]) => `${ns}/${name}`));
  });
});

describe('cni.multusNetwork: CNI-mode pods select the network that runs the mesh plugin', () => {
  const bound = (annotations: Record<string, string> = {}) => istioPod({ nodeName: 'good' }, annotations);

  it.each([
    ['no annotation', {}, NETWORK],
    ['a comma list', { [NETWORKS_ANNOTATION]: 'macvlan-conf' }, `macvlan-conf, ${NETWORK}`],
    [
      'a JSON list (Istio test data)',
      { [NETWORKS_ANNOTATION]: '[{"name": "alt_cni"}, {"name": "more_cni", "namespace": "kube-system"}]' },
      '[{"name": "alt_cni"}, {"name": "more_cni", "namespace": "kube-system"}, {"namespace":"default","name":"istio-cni"}]',
    ],
    ['an empty JSON list', { [NETWORKS_ANNOTATION]: '[]' }, '[{"namespace":"default","name":"istio-cni"}]'],
  ])('%s: added in CNI mode, once', (_, annotations, want) => {
    const p = bound(annotations);
    const d = decide(input(p), verified, openshift);
    expect(d).toMatchObject({ kind: 'patch', reason: 'node_verified' });
    const out = apply(p, d);
    expect(out.metadata?.annotations?.[NETWORKS_ANNOTATION]).toBe(want);
    expect(parseNetworks(want, 'demo')).toContainEqual({ namespace: 'default', name: 'istio-cni' });
    expect(checkPosture(input(out), verified, openshift)).toMatchObject({ ok: true });
    // Idempotent: the apiserver's reinvocation changes nothing.
    const again = decide(input(out), verified, openshift);
    expect(again.kind === 'skip' || (again.kind === 'patch' && again.ops.length === 0)).toBe(true);
  });

  it('already listed (as Istio lists it): not added again', () => {
    const p = bound({ [NETWORKS_ANNOTATION]: 'default/istio-cni' });
    const d = decide(input(p), verified, openshift);
    if (d.kind !== 'patch') throw new Error(d.kind);
    expect(JSON.stringify(d.ops)).not.toContain(NETWORKS_ANNOTATION.replace('/', '~1'));
  });

  it('init mode does not need it: not added', () => {
    const p = istioPod({ nodeName: 'bad' });
    const validate = cfg('istio', { cni: { multusNetwork: NETWORK }, redirect: { onUnverifiedNode: 'validate' } });
    const out = apply(p, decide(input(p), verified, validate));
    expect(out.metadata?.annotations?.[NETWORKS_ANNOTATION]).toBeUndefined();
  });

  it('mesh custom: added with the validator', () => {
    const p = pod({ nodeName: 'good' });
    const out = apply(p, decide(input(p), verified, custom));
    expect(out.metadata?.annotations?.[NETWORKS_ANNOTATION]).toBe(NETWORK);
    expect(checkPosture(input(out), verified, custom)).toMatchObject({ ok: true });
  });

  it('a CNI-mode pod without it is refused by the validating webhook', () => {
    const p = bound();
    const out = apply(p, decide(input(p), verified, cfg('istio')));
    const result = checkPosture(input(out), verified, openshift);
    expect(result).toEqual({
      ok: false,
      reason: 'multus_network_missing',
      message:
        "the mesh's CNI plugin runs as the Multus network default/istio-cni (cni.multusNetwork), and the pod's " +
        'k8s.v1.cni.cncf.io/networks does not list it',
    });
  });

  it('Istio’s CNI-mode output with an annotation Multus cannot read (alt_cni) is refused, saying why', () => {
    const p = corpusPod('istio__hello-existing-cncf-networks.yaml.injected') as unknown as Pod;
    const result = checkPosture(input(p), verified, openshift);
    expect(result).toMatchObject({ ok: false, reason: 'multus_network_missing' });
    if (result.ok) return;
    expect(result.message).toBe(
      'Multus cannot read k8s.v1.cni.cncf.io/networks ("alt_cni" is not a lower-case DNS label)',
    );
  });

  it('an UPDATE that drops the network is refused', () => {
    const p = bound();
    const out = apply(p, decide(input(p), verified, openshift));
    const next = structuredClone(out);
    delete next.metadata?.annotations?.[NETWORKS_ANNOTATION];
    expect(checkUpdate(out, next, 'demo', undefined, verified, openshift)).toMatchObject({
      ok: false,
      reason: 'multus_network_missing',
    });
  });

  it('a network without namespace is refused in the config (each pod namespace could define it)', () => {
    expect(() => cfg('istio', { cni: { multusNetwork: 'istio-cni' } })).toThrow(
      /cni\.multusNetwork: "istio-cni" is not namespace\/name of a NetworkAttachmentDefinition/,
    );
  });
});

describe('v1.multus-cni.io/default-network: the pod names its own default network', () => {
  const ann = { 'v1.multus-cni.io/default-network': 'kube-system/plain-bridge' };

  it('companion with istio-init: the init container stays (cni_skips_pod), whatever the node', () => {
    const p = istioPod({ nodeName: 'good' }, ann);
    const d = decide(input(p), verified, cfg('istio'));
    expect(d).toMatchObject({ kind: 'patch', reason: 'cni_skips_pod', redirect: { kind: 'init' } });
    expect(apply(p, d).spec.initContainers?.map((c) => c.name)).toContain('istio-init');
  });

  it('mesh custom: its own init container instead of the validator', () => {
    const p = pod({ nodeName: 'good' }, { name: 'web', namespace: 'demo', annotations: ann });
    const d = decide(input(p), verified, cfg('custom'));
    expect(d).toMatchObject({ kind: 'patch', reason: 'cni_skips_pod' });
  });

  it('a CNI-mode pod that carries it is refused by the validating webhook', () => {
    const p = istioPod({ nodeName: 'good' });
    const out = apply(p, decide(input(p), verified, cfg('istio')));
    out.metadata!.annotations = { ...out.metadata?.annotations, ...ann };
    expect(checkPosture(input(out), verified, cfg('istio'))).toMatchObject({
      ok: false,
      reason: 'mesh_cni_skips',
      message: expect.stringContaining("the pod replaces Multus' default network (v1.multus-cni.io/default-network"),
    });
  });
});
