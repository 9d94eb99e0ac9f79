/**
 * Values meshgate reads on a mesh's behalf, read as the mesh reads them (issue 21 §6). istio-cni 1.27
 * (cni/pkg/plugin/plugin.go) skips a pod whose istio-proxy's env makes strconv.ParseBool(DISABLE_ENVOY) true (the
 * env read into a map: the last entry of a name wins, valueFrom reads as ""), and one whose sidecar.istio.io/inject
 * label, else annotation, parses false; linkerd-cni (cni-plugin/main.go) reads no annotation to decide.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/mutate/decide.ts';
import { istio as istioProfile } from '../../src/mesh/istio.ts';
import { linkerd as linkerdProfile } from '../../src/mesh/linkerd.ts';
import type { EnvVar, Pod } from '../../src/contract/pod.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { cfg, input, istio, istioPod, linkerdPod, verified } from '../policy/mutate/fixtures.ts';

const withProxyEnv = (env: EnvVar[]): Pod =>
  istioPod({ containers: [{ name: 'app', image: 'nginx' }, istio.proxy({ env })] });
const disable = (...values: string[]): EnvVar[] => values.map((value) => ({ name: 'DISABLE_ENVOY', value }));

describe('DISABLE_ENVOY on istio-proxy, read with ParseBool as istio-cni reads it', () => {
  const refused: Array<[string, EnvVar[]]> = [
    ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((v) => [v, disable(v)] as [string, EnvVar[]]),
    ['false, then 1: the last wins', disable('false', '1')],
  ];
  it.each(refused)('%s: refused', (_n, env) => {
    const p = withProxyEnv(env);
    const r = checkPosture(input(p), verified, cfg('istio'));
    // Envoy switched off is Istio's proxyless gRPC: an opt-out with its own code (issue 31 §1).
    expect(r).toMatchObject({ ok: false, reason: 'proxyless_grpc' });
    expect(!r.ok && r.message).toMatch(
      /istio-proxy's DISABLE_ENVOY=\S+: Istio's proxyless gRPC runs its agent without Envoy/,
    );
    expect(decide(input(p), verified, cfg('istio'))).toMatchObject({ kind: 'deny', reason: 'proxyless_grpc' });
  });

  const allowed: Array<[string, EnvVar[]]> = [
    ...['0', 'false', 'False', '', 'yes', 'on', 'tRUE'].map(
      (v) => [JSON.stringify(v), disable(v)] as [string, EnvVar[]],
    ),
  ];
  it.each(allowed)('%s: allowed', (_n, env) => {
    expect(decide(input(withProxyEnv(env)), verified, cfg('istio')).kind).toBe('patch');
  });

  // Stricter than the mesh, on purpose: Istio's injector never writes these (src/policy/judge/istio-env.ts). A
  // duplicate that says "true" is refused although the kubelet keeps the last entry, and a valueFrom cannot be read at
  // admission (istio-cni reads "" for it, while pilot-agent sees the resolved value).
  const stricter: Array<[string, EnvVar[], RegExp]> = [
    ['true, then false', disable('true', 'false'), /DISABLE_ENVOY/],
    [
      'from valueFrom',
      [{ name: 'DISABLE_ENVOY', valueFrom: { fieldRef: { fieldPath: 'x' } } } as EnvVar],
      /takes DISABLE_ENVOY from .*which admission cannot read/,
    ],
  ];
  it.each(stricter)('%s: refused', (_n, env, message) => {
    const r = checkPosture(input(withProxyEnv(env)), verified, cfg('istio'));
    expect(r).toMatchObject({ ok: false, reason: 'impostor_container' });
    expect(!r.ok && r.message).toMatch(message);
  });
});

describe('sidecar.istio.io/inject as istio-cni reads it: the label, else the annotation, with ParseBool', () => {
  const where = (label?: string, annotation?: string): Pod => {
    const p = istioPod();
    if (label !== undefined) p.metadata!.labels = { 'sidecar.istio.io/inject': label };
    if (annotation !== undefined) p.metadata!.annotations!['sidecar.istio.io/inject'] = annotation;
    return p;
  };
  const cases: Array<[string, Pod, string | undefined]> = [
    ['no switch', where(), undefined],
    ...['0', 'f', 'F', 'FALSE', 'false', 'False'].map(
      (v) =>
        [
          `annotation ${v}`,
          where(undefined, v),
          `istio-cni skips pods with annotation sidecar.istio.io/inject=${v}`,
        ] as [string, Pod, string],
    ),
    // Not ParseBool values: istio-cni ignores them (istiod's own reading, the opt-out, is judged before this).
    ...['no', 'off', 'n', 'disabled', 'true', 'yes'].map(
      (v) => [`annotation ${v}`, where(undefined, v), undefined] as [string, Pod, undefined],
    ),
    ['label true beats annotation false', where('true', 'false'), undefined],
    ['label 0 beats annotation true', where('0', 'true'), 'istio-cni skips pods with label sidecar.istio.io/inject=0'],
    ['an empty label still beats the annotation', where('', 'false'), undefined],
  ];
  it.each(cases)('%s', (_n, p, want) => {
    expect(istioProfile.cniSkips(p)).toBe(want);
  });
});

describe('sidecar.istio.io/inject as istiod 1.27 reads it: only "false" opts out', () => {
  const labelled = (value: string) => {
    const p = istioPod();
    p.metadata!.labels = { 'sidecar.istio.io/inject': value };
    return p;
  };
  it('"false" opts out (refused: injection.allowPodOptOut is false)', () => {
    const d = decide(input(labelled('false')), verified, cfg('istio'));
    expect(d).toMatchObject({ kind: 'deny', reason: 'opt_out_refused' });
  });
  // istiod injects these (the namespace's policy): meshgate judges the pod like any other.
  it.each(['no', 'off', 'n', 'True', 'yes', 'enabled'])('%j does not: CNI mode on a verified node', (v) => {
    expect(decide(input(labelled(v)), verified, cfg('istio'))).toMatchObject({
      kind: 'patch',
      reason: 'affinity_verified',
    });
  });
  // istiod injects, istio-cni skips: the pod keeps istio-init rather than rely on a plugin that ignores it.
  it.each(['0', 'f', 'F', 'FALSE', 'False'])('%j: istio-cni would skip the pod, so istio-init stays', (v) => {
    const d = decide(input(labelled(v)), verified, cfg('istio'));
    expect(d).toMatchObject({ kind: 'patch', reason: 'cni_skips_pod' });
    expect(
      d.kind === 'patch' && d.ops.some((o) => o.op === 'remove' && o.path.startsWith('/spec/initContainers')),
    ).toBe(false);
  });
});

describe('linkerd-cni reads no annotation to decide whether to redirect', () => {
  it('linkerd.io/inject=disabled does not stop the plugin (it stops the injector)', () => {
    expect(linkerdProfile.cniSkips(linkerdPod({}, { 'linkerd.io/inject': 'disabled' }))).toBeUndefined();
  });
});
