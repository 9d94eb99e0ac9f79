import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import { decide, type Decision } from '../../../src/policy/mutate/decide.ts';
import type { Pod } from '../../../src/contract/pod.ts';
import { readStatus } from '../../../src/policy/status.ts';
import { cfg, facts, input, istio, istioPod, linkerdPod, pinnedTo, pod, verified } from './fixtures.ts';

function apply(p: Pod, d: Decision): Pod {
  if (d.kind !== 'patch')
    throw new Error(`expected a patch, got ${d.kind}${d.kind === 'deny' ? `: ${d.message}` : ''}`);
  // validate=true: every op must apply to the document as given.
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(d.ops) as jsonpatch.Operation[], true, false)
    .newDocument;
}

const names = (p: Pod) => ({
  init: (p.spec.initContainers ?? []).map((c) => c.name),
  containers: p.spec.containers.map((c) => c.name),
});

describe('screen: skips and refusals shared with the validating webhook', () => {
  const cases: Array<
    [string, Pod, string, string | undefined, Record<string, unknown>, { kind: string; reason: string }]
  > = [
    ['kube-system', pod(), 'kube-system', undefined, {}, { kind: 'skip', reason: 'system_namespace' }],
    ["meshgate's own namespace", pod(), 'meshgate', undefined, {}, { kind: 'skip', reason: 'mesh_namespace' }],
    [
      'mirror pod created by its own kubelet',
      pod({ nodeName: 'good' }, { name: 'w', annotations: { 'kubernetes.io/config.mirror': 'abc' } }),
      'demo',
      'system:node:good',
      {},
      { kind: 'skip', reason: 'mirror_pod' },
    ],
    [
      'pod opt-out refused',
      pod({}, { name: 'w', labels: { 'meshgate.io/inject': 'false' } }),
      'demo',
      undefined,
      {},
      { kind: 'deny', reason: 'opt_out_refused' },
    ],
    [
      'pod opt-out allowed by config',
      pod({}, { name: 'w', labels: { 'meshgate.io/inject': 'false' } }),
      'demo',
      undefined,
      { injection: { allowPodOptOut: true } },
      { kind: 'skip', reason: 'pod_opted_out' },
    ],
    [
      'hostNetwork refused',
      pod({ hostNetwork: true }),
      'demo',
      undefined,
      {},
      { kind: 'deny', reason: 'host_network' },
    ],
    [
      'hostNetwork allowed by config',
      pod({ hostNetwork: true }),
      'demo',
      undefined,
      { injection: { allowPodOptOut: true } },
      { kind: 'skip', reason: 'host_network_allowed' },
    ],
  ];
  it.each(cases)('%s', (_n, p, ns, requester, c, want) => {
    expect(decide(input(p, ns, requester), verified, cfg('custom', c))).toMatchObject(want);
  });

  it("a mirror-pod annotation from anyone but that node's kubelet is ignored: the pod is judged like any other", () => {
    const p = pod({ nodeName: 'good' }, { name: 'w', annotations: { 'kubernetes.io/config.mirror': 'abc' } });
    for (const requester of [undefined, 'alice', 'system:node:bad', 'system:serviceaccount:demo:default']) {
      expect(decide(input(p, 'demo', requester), verified, cfg()).kind, requester).toBe('patch');
    }
  });

  it('refuses 120,000 empty node-selector terms before building any op (one op per term would be a 36 MB patch)', () => {
    const terms = Array.from({ length: 120_000 }, () => ({}));
    const p = pod({
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
    });
    const d = decide(input(p), verified, cfg());
    expect(d).toMatchObject({ kind: 'deny', reason: 'too_large' });
    expect(d.kind === 'deny' && d.message).toMatch(/120000 required node-selector terms.*at most 64/);
  });
});

describe('mesh custom: meshgate injects its own templates', () => {
  it('CNI mode: validator then native proxy, no privileged container, affinity, label and status', () => {
    const out = apply(pod(), decide(input(pod()), verified, cfg()));
    expect(names(out).init).toEqual(['meshgate-validate', 'meshgate-proxy']);
    expect(out.spec.initContainers![1].restartPolicy).toBe('Always');
    expect(JSON.stringify(out)).not.toContain('NET_ADMIN');
    expect(out.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
    expect(out.spec.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'meshgate.io/cni-verified', operator: 'In', values: ['true'] }] },
    ]);
    expect(readStatus(out.metadata!.annotations)).toMatchObject({
      mode: 'cni',
      reason: 'affinity_verified',
      affinity: true,
      nativeSidecar: true,
    });
  });

  it('the validator probes 127.0.0.6 as the proxy UID/GID (only they are redirected on loopback) and listens on both ports', () => {
    const out = apply(pod(), decide(input(pod()), verified, cfg()));
    const v = out.spec.initContainers![0];
    expect(v.securityContext).toMatchObject({
      runAsUser: 1337,
      runAsGroup: 1337,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(v.args).toEqual([
      '--outbound-port=15001',
      '--inbound-port=15006',
      '--probe-address=127.0.0.6:15002',
      '--timeout=5s',
    ]);
  });

  it('init mode with validator on an unverified node (validate); exemptions reach the init container as env', () => {
    const p = pod(
      { nodeName: 'bad', initContainers: [{ name: 'user-init', image: 'busybox' }] },
      {
        name: 'w',
        annotations: {
          'meshgate.io/exclude-outbound-ports': '5432',
          'meshgate.io/exclude-outbound-cidrs': '169.254.169.254/32',
        },
      },
    );
    const out = apply(p, decide(input(p), verified, cfg('custom', { redirect: { onUnverifiedNode: 'validate' } })));
    expect(names(out).init).toEqual(['meshgate-init', 'meshgate-validate', 'meshgate-proxy', 'user-init']);
    const init = out.spec.initContainers![0];
    expect(init.securityContext?.capabilities?.add).toEqual(['NET_ADMIN', 'NET_RAW']);
    expect(init.env).toEqual([
      { name: 'MESHGATE_EXCLUDE_OUTBOUND_CIDRS', value: '169.254.169.254/32' },
      { name: 'MESHGATE_EXCLUDE_OUTBOUND_PORTS', value: '5432' },
      { name: 'MESHGATE_EXCLUDE_INBOUND_PORTS', value: '' },
    ]);
    expect(init.args).toContain('$(MESHGATE_EXCLUDE_OUTBOUND_CIDRS)');
    expect(out.spec.affinity).toBeUndefined();
  });

  it('regular sidecar is appended to containers when native sidecars are off', () => {
    const p = pod({ nodeName: 'good' });
    const out = apply(p, decide(input(p), verified, cfg('custom', { injection: { nativeSidecar: 'off' } })));
    expect(names(out).containers).toEqual(['app', 'meshgate-proxy']);
    expect(out.spec.containers[1].restartPolicy).toBeUndefined();
  });

  it('is idempotent: injecting the output changes nothing', () => {
    const once = apply(pod(), decide(input(pod()), verified, cfg()));
    expect(decide(input(once), verified, cfg())).toEqual({ kind: 'skip', reason: 'already_injected' });
  });

  it('adds only the redirect when the real proxy is already there', () => {
    const first = apply(pod({ nodeName: 'good' }), decide(input(pod({ nodeName: 'good' })), verified, cfg()));
    const withoutValidator: Pod = {
      ...first,
      spec: { ...first.spec, initContainers: first.spec.initContainers!.slice(1) },
    };
    const out = apply(withoutValidator, decide(input(withoutValidator), verified, cfg()));
    expect(names(out).init).toEqual(['meshgate-validate', 'meshgate-proxy']);
  });

  it('proxy resources from annotations; invalid values deny naming annotation and value', () => {
    const p = pod(
      { nodeName: 'good' },
      { name: 'w', annotations: { 'meshgate.io/proxy-cpu-limit': '500m', 'meshgate.io/proxy-memory-request': '64Mi' } },
    );
    const out = apply(p, decide(input(p), verified, cfg()));
    expect(out.spec.initContainers!.find((c) => c.name === 'meshgate-proxy')!.resources).toEqual({
      requests: { cpu: '100m', memory: '64Mi' },
      limits: { cpu: '500m', memory: '1Gi' },
    });
    const bad = pod({}, { name: 'w', annotations: { 'meshgate.io/proxy-cpu-limit': 'two' } });
    expect(decide(input(bad), verified, cfg())).toMatchObject({
      kind: 'deny',
      reason: 'invalid_annotation',
      message: expect.stringMatching(/proxy-cpu-limit: "two" is not a Kubernetes quantity/),
    });
  });

  const invalid: Array<[string, string, RegExp]> = [
    ['meshgate.io/exclude-inbound-ports', '80,70000', /exclude-inbound-ports: port 70000 is out of range/],
    ['meshgate.io/exclude-outbound-ports', 'http', /exclude-outbound-ports: "http" is not a port or port range/],
    [
      'meshgate.io/exclude-outbound-cidrs',
      '10.0.0.0/33',
      /exclude-outbound-cidrs: "10\.0\.0\.0\/33" has an invalid prefix length/,
    ],
    ['meshgate.io/exclude-outbound-cidrs', '10.0.0.0', /is not a CIDR/],
  ];
  it.each(invalid)('denies %s=%s naming annotation and value', (key, value, message) => {
    const d = decide(input(pod({}, { name: 'w', annotations: { [key]: value } })), verified, cfg());
    expect(d).toMatchObject({ kind: 'deny', reason: 'invalid_annotation', message: expect.stringMatching(message) });
  });
});

describe("mesh istio: companion of Istio's injector", () => {
  const c = () => cfg('istio');

  it('before Istio injected (webhook order) it waits: the apiserver reinvokes meshgate after Istio', () => {
    expect(decide(input(pod()), verified, c())).toEqual({ kind: 'skip', reason: 'no_proxy_yet' });
  });

  it('verified node: istio-init replaced by the validator, sidecar.istio.io/status kept truthful, no privileged container', () => {
    const p = istioPod({ nodeName: 'good' });
    const out = apply(p, decide(input(p), verified, c()));
    expect(names(out)).toEqual({ init: ['istio-validation'], containers: ['app', 'istio-proxy'] });
    expect(out.spec.initContainers![0].image).toBe('ghcr.io/meshgate/meshgate:0.1.0');
    expect(JSON.stringify(out)).not.toContain('NET_ADMIN');
    expect(JSON.parse(out.metadata!.annotations!['sidecar.istio.io/status']).initContainers).toEqual([
      'istio-validation',
    ]);
    expect(readStatus(out.metadata!.annotations)).toMatchObject({
      mode: 'cni',
      reason: 'node_verified',
      initContainers: ['istio-validation'],
      removedInitContainers: ['istio-init'],
      nativeSidecar: false,
    });
  });

  it('no node yet: pinned to verified nodes', () => {
    const out = apply(istioPod(), decide(input(istioPod()), verified, c()));
    expect(names(out).init).toEqual(['istio-validation']);
    expect(out.spec.affinity).toBeDefined();
  });

  it('unverified node: refused (reject) or istio-init kept with the validator after it (validate)', () => {
    const p = istioPod({ nodeName: 'bad' });
    expect(decide(input(p), verified, c())).toMatchObject({ kind: 'deny', reason: 'node_unverified' });
    const out = apply(p, decide(input(p), verified, cfg('istio', { redirect: { onUnverifiedNode: 'validate' } })));
    expect(names(out).init).toEqual(['istio-init', 'istio-validation']);
  });

  it('no verified node anywhere: istio-init stays (init mode)', () => {
    const none = facts({ bad: { verified: false } });
    const out = apply(istioPod(), decide(input(istioPod()), none, c()));
    expect(names(out).init).toEqual(['istio-init']);
    expect(out.metadata!.labels!['meshgate.io/redirect']).toBe('init');
  });

  it('native sidecar proxy: validator before it', () => {
    const p = pod(
      { nodeName: 'good', initContainers: [istio.init(), istio.proxy({ restartPolicy: 'Always' })] },
      { name: 'w', annotations: { 'sidecar.istio.io/status': '{"initContainers":["istio-init","istio-proxy"]}' } },
    );
    const out = apply(p, decide(input(p), verified, c()));
    expect(names(out).init).toEqual(['istio-validation', 'istio-proxy']);
    expect(readStatus(out.metadata!.annotations)).toMatchObject({ nativeSidecar: true });
  });

  it('without sidecar.istio.io/status istio-cni would skip the pod: istio-init stays', () => {
    const p = pod({ nodeName: 'good', initContainers: [istio.init()], containers: [{ name: 'app' }, istio.proxy()] });
    const out = apply(p, decide(input(p), verified, c()));
    expect(names(out).init).toEqual(['istio-init']);
    expect(readStatus(out.metadata!.annotations)).toMatchObject({ mode: 'init', reason: 'cni_skips_pod' });
  });

  it('istiod with pilot.cni.enabled (its istio-validation, no istio-init): kept on verified nodes, pinned when nodeless, refused when unverified', () => {
    const p = (spec: Partial<Pod['spec']>) => istioPod({ initContainers: [istio.validation()], ...spec });
    const onGood = apply(p({ nodeName: 'good' }), decide(input(p({ nodeName: 'good' })), verified, c()));
    expect(names(onGood).init).toEqual(['istio-validation']);
    expect(onGood.spec.initContainers![0].image).toBe('docker.io/istio/proxyv2:1.27.0');
    expect(decide(input(p({})), verified, c())).toMatchObject({ kind: 'patch', reason: 'affinity_verified' });
    expect(decide(input(p({})), facts({}), c())).toMatchObject({ kind: 'patch', reason: 'cni_only' });
    expect(
      decide(input(p({ nodeName: 'bad' })), verified, cfg('istio', { redirect: { onUnverifiedNode: 'validate' } })),
    ).toMatchObject({ kind: 'deny', reason: 'no_fallback' });
  });

  it('at audit (hold: false): swapped on a verified node, istio-init kept and unpinned elsewhere, a CNI-only pod untouched', () => {
    const audit = { hold: false };
    const onGood = apply(
      istioPod({ nodeName: 'good' }),
      decide(input(istioPod({ nodeName: 'good' })), verified, c(), audit),
    );
    expect(names(onGood).init).toEqual(['istio-validation']);
    for (const spec of [{}, { nodeName: 'bad' }, pinnedTo('bad')]) {
      const d = decide(input(istioPod(spec)), verified, c(), audit);
      expect(d).toMatchObject({ kind: 'patch', reason: 'audit_unpinned' });
      const out = apply(istioPod(spec), d);
      expect(names(out).init).toEqual(['istio-init']);
      expect(out.spec.affinity).toEqual(istioPod(spec).spec.affinity);
    }
    // istiod's CNI mode (istio-validation, no istio-init): nothing to fall back to, and nothing pinned or refused.
    const cniOnly = istioPod({ initContainers: [istio.validation()], nodeName: 'bad' });
    expect(decide(input(cniOnly), verified, c(), audit)).toEqual({ kind: 'skip', reason: 'audit_unpinned' });
    expect(decide(input(istioPod({ initContainers: [istio.validation()] })), verified, c(), audit)).toEqual({
      kind: 'skip',
      reason: 'audit_unpinned',
    });
  });

  it('is idempotent (the apiserver reinvokes meshgate after later webhooks)', () => {
    for (const spec of [{ nodeName: 'good' }, {}]) {
      const once = apply(istioPod(spec), decide(input(istioPod(spec)), verified, c()));
      expect(decide(input(once), verified, c())).toEqual({ kind: 'skip', reason: 'already_injected' });
    }
  });
});

describe('validator.imagePullSecrets: added with the validator meshgate injects, and only then', () => {
  const pulls = (p: Pod) => (p.spec.imagePullSecrets ?? []).map((s) => s.name);

  it('istio: with the validator that replaces istio-init; the pod’s own kept; idempotent', () => {
    const c = cfg('istio', { validator: { imagePullSecrets: ['mirror', 'own'] } });
    const p = istioPod({ nodeName: 'good', imagePullSecrets: [{ name: 'own' }] });
    const out = apply(p, decide(input(p), verified, c));
    expect(names(out).init).toEqual(['istio-validation']);
    expect(pulls(out)).toEqual(['own', 'mirror']);
    expect(decide(input(out), verified, c)).toEqual({ kind: 'skip', reason: 'already_injected' });
    // No validator added (no verified node anywhere: istio-init stays alone): no pull secret either.
    const init = istioPod({});
    const kept = apply(init, decide(input(init), facts({ n: { verified: false } }), c));
    expect(names(kept).init).toEqual(['istio-init']);
    expect(kept.spec.imagePullSecrets).toBeUndefined();
  });

  it('custom: with the validator it injects, none in init mode without validation', () => {
    const c = cfg('custom', { validator: { imagePullSecrets: ['mirror'] } });
    const out = apply(pod({ nodeName: 'good' }), decide(input(pod({ nodeName: 'good' })), verified, c));
    expect(names(out).init[0]).toBe('meshgate-validate');
    expect(pulls(out)).toEqual(['mirror']);
    const unverified = facts({ n: { verified: false } });
    const init = apply(pod(), decide(input(pod()), unverified, c));
    expect(names(init).init).not.toContain('meshgate-validate');
    expect(init.spec.imagePullSecrets).toBeUndefined();
  });
});

describe("mesh linkerd: companion of Linkerd's injector", () => {
  it("verified node: linkerd-init replaced by meshgate's linkerd-network-validator, probing off the loopback as a non-proxy UID", () => {
    const p = linkerdPod({ nodeName: 'good' });
    const out = apply(p, decide(input(p), verified, cfg('linkerd')));
    expect(names(out).init).toEqual(['linkerd-network-validator']);
    const v = out.spec.initContainers![0];
    expect(v.securityContext).toMatchObject({ runAsUser: 65534, runAsGroup: 65534 });
    expect(v.args).toEqual([
      '--external-probe',
      '--outbound-port=4140',
      '--inbound-port=none',
      '--probe-address=192.0.2.1:80',
      '--timeout=5s',
    ]);
    expect(readStatus(out.metadata!.annotations)).toMatchObject({
      mode: 'cni',
      nativeSidecar: false,
      removedInitContainers: ['linkerd-init'],
    });
  });

  it('native-sidecar proxy with a CNI plugin that does not redirect it (cni.redirectsNativeSidecars false): linkerd-init stays', () => {
    const p = pod({
      nodeName: 'good',
      initContainers: [
        linkerdPod().spec.initContainers![0],
        { ...linkerdPod().spec.containers[1], restartPolicy: 'Always' },
      ],
    });
    const out = apply(p, decide(input(p), verified, cfg('linkerd', { cni: { redirectsNativeSidecars: false } })));
    expect(names(out).init).toEqual(['linkerd-init', 'linkerd-proxy']);
    expect(readStatus(out.metadata!.annotations)).toMatchObject({
      mode: 'init',
      reason: 'cni_skips_pod',
      nativeSidecar: true,
    });
  });
});
