import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import { decide, type Decision } from '../../src/inject/decide.ts';
import type { Pod } from '../../src/inject/pod.ts';
import { readStatus } from '../../src/inject/status.ts';
import { cfg, enabledNs, facts, pod } from './fixtures.ts';

const verified = facts({ good: { verified: true, kubeletVersion: 'v1.34.1' }, bad: { verified: false, kubeletVersion: 'v1.34.1' } });

function apply(p: Pod, d: Decision): Pod {
  if (d.kind !== 'patch') throw new Error(`expected a patch, got ${d.kind}`);
  // validate=true: every op must apply to the document as given.
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(d.ops) as jsonpatch.Operation[], true, false).newDocument;
}

describe('skips', () => {
  const cases: Array<[string, Pod, { name: string; labels?: Record<string, string> }, Record<string, unknown>, string]> = [
    ['kube-system', pod(), { name: 'kube-system', labels: {} }, {}, 'system_namespace'],
    ["meshgate's own namespace", pod(), { name: 'meshgate' }, {}, 'mesh_namespace'],
    ['namespace not labelled', pod(), { name: 'demo', labels: {} }, {}, 'namespace_not_enabled'],
    ['pod opt-out', pod({}, { name: 'w', labels: { 'meshgate.io/inject': 'false' } }), enabledNs, {}, 'pod_opted_out'],
    ['pod opt-in without a selector', pod({}, { name: 'w', labels: { 'meshgate.io/inject': 'true' } }), { name: 'demo', labels: { team: 'a' } }, {}, 'namespace_not_enabled'],
    ['hostNetwork', pod({ hostNetwork: true }), enabledNs, {}, 'host_network'],
    ['mirror pod', pod({}, { name: 'w', annotations: { 'kubernetes.io/config.mirror': 'abc' } }), enabledNs, {}, 'mirror_pod'],
    ['istio proxy present', pod({ containers: [{ name: 'app' }, { name: 'istio-proxy' }] }), enabledNs, {}, 'foreign_proxy'],
    ['enforce-only without a recognised init', pod(), enabledNs, { injection: { enabled: false } }, 'no_recognised_init'],
  ];
  it.each(cases)('%s', (_n, p, ns, c, reason) => {
    expect(decide({ pod: p, namespace: ns }, verified, cfg(c))).toEqual({ kind: 'skip', reason });
  });

  it('pod opt-in where a configured selector allows it', () => {
    const p = pod({}, { name: 'w', labels: { 'meshgate.io/inject': 'true' } });
    const d = decide({ pod: p, namespace: { name: 'demo', labels: { team: 'a' } } }, verified, cfg({ injection: { podOptInNamespaceLabels: { team: 'a' } } }));
    expect(d.kind).toBe('patch');
  });

  it('unknown namespace labels: the webhook selector is trusted', () => {
    expect(decide({ pod: pod(), namespace: { name: 'demo' } }, verified, cfg()).kind).toBe('patch');
  });
});

describe('injection', () => {
  it('CNI mode: validator then native proxy, no privileged container, affinity, label and status', () => {
    const out = apply(pod(), decide({ pod: pod(), namespace: enabledNs }, verified, cfg()));
    expect(out.spec.initContainers!.map((c) => c.name)).toEqual(['meshgate-validate', 'meshgate-proxy']);
    expect(out.spec.initContainers![1].restartPolicy).toBe('Always');
    expect(JSON.stringify(out)).not.toContain('NET_ADMIN');
    expect(out.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
    expect(out.spec.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'meshgate.io/cni-verified', operator: 'In', values: ['true'] }] },
    ]);
    expect(readStatus(out.metadata!.annotations)).toMatchObject({ mode: 'cni', reason: 'affinity_verified', affinity: true, nativeSidecar: true });
  });

  it('init mode with validator on an unverified node (validate)', () => {
    const p = pod({ nodeName: 'bad', initContainers: [{ name: 'user-init' }] });
    const out = apply(p, decide({ pod: p, namespace: enabledNs }, verified, cfg({ redirect: { onUnverifiedNode: 'validate' } })));
    expect(out.spec.initContainers!.map((c) => c.name)).toEqual(['meshgate-init', 'meshgate-validate', 'meshgate-proxy', 'user-init']);
    expect(JSON.stringify(out.spec.initContainers![0])).toContain('NET_ADMIN');
    expect(out.spec.affinity).toBeUndefined();
  });

  it('regular sidecar is appended to containers when native sidecars are off', () => {
    const out = apply(pod({ nodeName: 'good' }), decide({ pod: pod({ nodeName: 'good' }), namespace: enabledNs }, verified, cfg({ injection: { nativeSidecar: 'off' } })));
    expect(out.spec.containers.map((c) => c.name)).toEqual(['app', 'meshgate-proxy']);
    expect(out.spec.containers[1].restartPolicy).toBeUndefined();
  });

  it('removes a recognised init container left without its proxy (half-injected by another mesh)', () => {
    const p = pod({ initContainers: [{ name: 'user-init' }, { name: 'linkerd-init' }] });
    const d = decide({ pod: p, namespace: enabledNs }, verified, cfg());
    const out = apply(p, d);
    expect(out.spec.initContainers!.map((c) => c.name)).toEqual(['meshgate-validate', 'meshgate-proxy', 'user-init']);
    expect(d.kind === 'patch' && d.status.removedInitContainers).toEqual(['linkerd-init']);
  });

  it('is idempotent: injecting the output changes nothing', () => {
    const once = apply(pod(), decide({ pod: pod(), namespace: enabledNs }, verified, cfg()));
    expect(decide({ pod: once, namespace: enabledNs }, verified, cfg())).toEqual({ kind: 'skip', reason: 'already_injected' });
  });

  it('adds only what is missing when the proxy exists without a status', () => {
    const p = pod({ containers: [{ name: 'app' }, { name: 'meshgate-proxy', image: 'x' }], volumes: [{ name: 'meshgate-proxy-data', emptyDir: {} }] });
    const out = apply(p, decide({ pod: p, namespace: enabledNs }, verified, cfg({ injection: { nativeSidecar: 'off' } })));
    expect(out.spec.containers.filter((c) => c.name === 'meshgate-proxy')).toHaveLength(1);
    expect(out.spec.volumes).toHaveLength(1);
  });

  it('annotation overrides set proxy resources and redirect exclusions', () => {
    const p = pod({ nodeName: 'bad' }, { name: 'w', annotations: {
      'meshgate.io/proxy-cpu-limit': '500m', 'meshgate.io/proxy-memory-request': '64Mi',
      'meshgate.io/exclude-outbound-ports': '5432, 6379', 'meshgate.io/exclude-outbound-cidrs': '169.254.169.254/32,fd00::/8',
      'meshgate.io/exclude-inbound-ports': '9090' } });
    const out = apply(p, decide({ pod: p, namespace: enabledNs }, verified, cfg({ redirect: { onUnverifiedNode: 'validate' } })));
    const proxy = out.spec.initContainers!.find((c) => c.name === 'meshgate-proxy')!;
    expect(proxy.resources).toEqual({ requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '1Gi' } });
    expect(out.spec.initContainers![0].args).toEqual(expect.arrayContaining([
      '--exclude-outbound-ports=5432,6379', '--exclude-outbound-cidrs=169.254.169.254/32,fd00::/8', '--exclude-inbound-ports=9090',
    ]));
  });

  const invalid: Array<[string, string, RegExp]> = [
    ['meshgate.io/proxy-cpu-limit', 'two', /meshgate\.io\/proxy-cpu-limit: "two" is not a Kubernetes quantity/],
    ['meshgate.io/proxy-memory-request', '-1Gi', /proxy-memory-request: "-1Gi"/],
    ['meshgate.io/exclude-inbound-ports', '80,70000', /exclude-inbound-ports: port 70000 is out of range/],
    ['meshgate.io/exclude-outbound-ports', 'http', /exclude-outbound-ports: "http" is not a port number/],
    ['meshgate.io/exclude-outbound-cidrs', '10.0.0.0/33', /exclude-outbound-cidrs: "10\.0\.0\.0\/33" has an invalid prefix length/],
    ['meshgate.io/exclude-outbound-cidrs', '10.0.0.300/8', /has an invalid address "10\.0\.0\.300"/],
    ['meshgate.io/exclude-outbound-cidrs', '10.0.0.0', /is not a CIDR/],
  ];
  it.each(invalid)('denies %s=%s naming annotation and value', (key, value, message) => {
    const p = pod({}, { name: 'w', annotations: { [key]: value } });
    const d = decide({ pod: p, namespace: enabledNs }, verified, cfg());
    expect(d.kind).toBe('deny');
    expect(d.kind === 'deny' && d.reason).toBe('invalid_annotation');
    expect(d.kind === 'deny' && d.message).toMatch(message);
  });
});

describe('enforce-only behind another mesh', () => {
  const istioPod = () => pod({
    nodeName: 'good',
    initContainers: [{ name: 'istio-init', securityContext: { capabilities: { add: ['NET_ADMIN', 'NET_RAW'] } } }, { name: 'istio-proxy', restartPolicy: 'Always' }],
  });
  const c = () => cfg({ injection: { enabled: false } });

  it('CNI mode removes the privileged init and puts the validator in its place', () => {
    const out = apply(istioPod(), decide({ pod: istioPod(), namespace: enabledNs }, verified, c()));
    expect(out.spec.initContainers!.map((x) => x.name)).toEqual(['meshgate-validate', 'istio-proxy']);
    expect(readStatus(out.metadata!.annotations)).toMatchObject({ mode: 'cni', removedInitContainers: ['istio-init'] });
  });

  it('init mode keeps the privileged init; with validate the validator follows it', () => {
    const p = { ...istioPod(), spec: { ...istioPod().spec, nodeName: 'bad' } };
    const out = apply(p, decide({ pod: p, namespace: enabledNs }, verified, cfg({ injection: { enabled: false }, redirect: { onUnverifiedNode: 'validate' } })));
    expect(out.spec.initContainers!.map((x) => x.name)).toEqual(['istio-init', 'meshgate-validate', 'istio-proxy']);
  });

  it('is idempotent', () => {
    const once = apply(istioPod(), decide({ pod: istioPod(), namespace: enabledNs }, verified, c()));
    expect(decide({ pod: once, namespace: enabledNs }, verified, c()).kind).toBe('skip');
  });
});

describe('recorded statuses (built once per decision, shared)', () => {
  // Every combination of redirect mode, sidecar kind and node, each decided twice on different pods: the status
  // must describe exactly what that pod got, however many pods shared the decision before it.
  const old = facts({ good: { verified: true, kubeletVersion: 'v1.28.3' }, bad: { verified: false, kubeletVersion: 'v1.28.3' } });
  const none = facts({ bad: { verified: false, kubeletVersion: 'v1.34.1' } });
  // One config per mode, shared by every case, so cases that differ only in facts share its caches.
  const configs = { auto: cfg({ redirect: { mode: 'auto', onUnverifiedNode: 'validate' } }), required: cfg({ redirect: { mode: 'required', onUnverifiedNode: 'validate' } }), off: cfg({ redirect: { mode: 'off', onUnverifiedNode: 'validate' } }) };
  const combos: Array<[string, ReturnType<typeof cfg>, ReturnType<typeof facts>, Partial<Pod['spec']>]> = [];
  for (const mode of ['auto', 'required', 'off'] as const) {
    for (const [fname, f] of [['new kubelets', verified], ['old kubelets', old], ['no verified node', none]] as const) {
      for (const [sname, spec] of [['unscheduled', {}], ['on good', { nodeName: 'good' }], ['on bad', { nodeName: 'bad' }]] as const) {
        combos.push([`${mode}, ${fname}, ${sname}`, configs[mode], f, spec]);
      }
    }
  }
  it.each(combos)('%s', (_n, c, f, spec) => {
    for (const p of [pod(spec), pod({ ...spec, volumes: [{ name: 'data', emptyDir: {} }] }, { name: 'other', namespace: 'demo', labels: { app: 'x' } })]) {
      const d = decide({ pod: p, namespace: enabledNs }, f, c);
      if (d.kind !== 'patch') {
        expect(d.kind).toBe('deny');
        continue;
      }
      const out = apply(p, d);
      const status = readStatus(out.metadata?.annotations);
      expect(status).toEqual(d.status);
      const inits = (out.spec.initContainers ?? []).map((x) => x.name);
      const containers = out.spec.containers.map((x) => x.name);
      expect(inits).toEqual(d.status.initContainers);
      expect(containers.filter((x) => x.startsWith('meshgate-'))).toEqual(d.status.containers);
      expect(d.redirect.kind).not.toBe('deny');
      expect(d.status).toMatchObject({ mode: d.redirect.kind, reason: d.redirect.reason, nativeSidecar: (d.redirect as { native: boolean }).native });
      expect(out.metadata?.labels?.['meshgate.io/redirect']).toBe(d.redirect.kind);
      if (d.redirect.node) expect(d.status.node).toBe(d.redirect.node);
      else expect(d.status.node).toBeUndefined();
    }
  });
});
