/**
 * Workload templates judged at apply time (issue 34 §3, src/admission/workload.ts): the workload routes of every
 * level, with the kinds the chart sends (apps/v1, batch/v1, another kind's spec.template). What its pods would meet
 * whatever the mesh's injector adds is refused at enforce and warned about below it, with the fix; what only a pod
 * shows (the injector's proxy, its node) never refuses a template; an update that keeps the template is not judged.
 */
import { describe, expect, it } from 'vitest';
import { admissionRoutes } from '../../src/admission/handlers.ts';
import { type AdmissionRequest, encodeResponse, type Verdict } from '../../src/admission/review.ts';
import { templateOf } from '../../src/admission/workload.ts';
import type { Container } from '../../src/contract/pod.ts';
import { cfg, istio, verified } from '../policy/mutate/fixtures.ts';

const istioRoutes = admissionRoutes({ config: cfg('istio'), nodes: verified });
const customRoutes = admissionRoutes({ config: cfg('custom'), nodes: verified });

const app = (over: Partial<Container> = {}): Container => ({ name: 'app', image: 'registry.example/app:1', ...over });
const template = (spec: Record<string, unknown> = {}, labels: Record<string, string> = { app: 'web' }) => ({
  metadata: { labels },
  spec: { containers: [app()], ...spec },
});

const deployment = (t = template()) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: t },
});

function review(object: Record<string, unknown>, old?: Record<string, unknown>): AdmissionRequest {
  const kind = object.kind as string;
  const [group, version] = (object.apiVersion as string).includes('/')
    ? (object.apiVersion as string).split('/')
    : ['', object.apiVersion as string];
  return {
    uid: 'u',
    operation: old ? 'UPDATE' : 'CREATE',
    namespace: 'shop',
    name: (object.metadata as { name: string }).name,
    kind: { group, version, kind },
    resource: { group, version, resource: `${kind.toLowerCase()}s` },
    object,
    oldObject: old,
  };
}

const at = (path: string, object: Record<string, unknown>, old?: Record<string, unknown>, routes = istioRoutes) =>
  routes[path](review(object, old)) as Verdict;
const warnings = (v: Verdict) => encodeResponse('admission.k8s.io/v1', 'u', v).response.warnings ?? [];

/** An app container running as the proxy's UID, which the redirect exempts: refused on every pod. */
const asProxy = template({ containers: [app({ securityContext: { runAsUser: 1337 } })] });

describe('a Deployment applied into a namespace meshgate guards', () => {
  it('what Istio will inject is not there yet: admitted quietly at every level (the pods are judged injected)', () => {
    for (const path of ['/validate/workloads', '/validate/workloads/warn', '/validate/workloads/audit']) {
      const v = at(path, deployment());
      expect(v).toEqual({ kind: 'allow', reason: 'no_proxy_yet' });
    }
  });

  it('what its pods would meet whatever the injector adds: refused at enforce with the fix, warned below', () => {
    const deny = at('/validate/workloads', deployment(asProxy));
    expect(deny).toMatchObject({ kind: 'deny', reason: 'proxy_identity' });
    const body = encodeResponse('admission.k8s.io/v1', 'u', deny).response;
    expect(body.status?.message).toMatch(
      /^meshgate: Deployment shop\/web: its pods would be refused: .*1337.*; to fix: run the container as a UID and GID other than the proxy's .*\[proxy_identity\]$/,
    );
    for (const level of ['warn', 'audit']) {
      const v = at(`/validate/workloads/${level}`, deployment(asProxy));
      expect(v).toMatchObject({ kind: 'allow', reason: 'proxy_identity', audited: { level } });
      expect(warnings(v)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^meshgate: Deployment shop/web: its pods would be refused at enforce \\[proxy_identity\\]: .*; to fix: .*Namespace shop is at ${level}: they are admitted`,
          ),
        ),
      ]);
    }
  });

  it('an opt-out label in the template is refused as on its pods', () => {
    const optOut = template({}, { app: 'web', 'sidecar.istio.io/inject': 'false' });
    expect(at('/validate/workloads', deployment(optOut))).toMatchObject({ kind: 'deny', reason: 'opt_out_refused' });
  });

  it('what only a pod shows never refuses a template: its node (bound here to an unverified one)', () => {
    const injected = template({
      nodeName: 'bad',
      initContainers: [istio.init()],
      containers: [app(), istio.proxy()],
    });
    injected.metadata = { labels: { app: 'web' }, annotations: { 'sidecar.istio.io/status': istio.status } } as never;
    expect(at('/validate/workloads', deployment(injected))).toMatchObject({ kind: 'allow' });
  });

  it('an update that keeps the template (scaling) is not judged; one that changes it is', () => {
    const scaled = { ...deployment(asProxy), spec: { ...deployment(asProxy).spec, replicas: 5 } };
    expect(at('/validate/workloads', scaled, deployment(asProxy))).toEqual({
      kind: 'allow',
      reason: 'template_unchanged',
    });
    expect(at('/validate/workloads', deployment(asProxy), deployment())).toMatchObject({ kind: 'deny' });
  });

  it('the request’s object is left as it came', () => {
    const d = deployment(asProxy);
    const before = structuredClone(d);
    at('/validate/workloads', d);
    expect(d).toEqual(before);
  });
});

describe('every kind the chart sends, and others at spec.template', () => {
  const hostNetwork = template({ hostNetwork: true });
  const kinds: Array<[string, Record<string, unknown>]> = [
    ['StatefulSet', { apiVersion: 'apps/v1', kind: 'StatefulSet', spec: { template: hostNetwork } }],
    ['DaemonSet', { apiVersion: 'apps/v1', kind: 'DaemonSet', spec: { template: hostNetwork } }],
    ['ReplicaSet', { apiVersion: 'apps/v1', kind: 'ReplicaSet', spec: { template: hostNetwork } }],
    ['Job', { apiVersion: 'batch/v1', kind: 'Job', spec: { template: hostNetwork } }],
    [
      'CronJob',
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        spec: { schedule: '* * * * *', jobTemplate: { spec: { template: hostNetwork } } },
      },
    ],
    ['an Argo Rollout', { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', spec: { template: hostNetwork } }],
  ];
  it.each(kinds)('%s: its template found and refused (host_network)', (_name, o) => {
    const object = { ...o, metadata: { name: 'w', namespace: 'shop' } };
    expect(templateOf(object)).toBe(hostNetwork);
    expect(at('/validate/workloads', object)).toMatchObject({ kind: 'deny', reason: 'host_network' });
  });

  it('a kind without a template of its own (a Rollout’s workloadRef) is not judged: its pods are', () => {
    const object = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'w', namespace: 'shop' },
      spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } },
    };
    expect(at('/validate/workloads', object)).toEqual({ kind: 'allow', reason: 'no_pod_template' });
  });
});

describe('mesh custom: the template as meshgate itself would inject its pods', () => {
  it('admitted with the decision its pods get; refused for what they would be refused', () => {
    expect(at('/validate/workloads', deployment(), undefined, customRoutes)).toEqual({
      kind: 'allow',
      reason: 'affinity_verified',
    });
    expect(at('/validate/workloads', deployment(asProxy), undefined, customRoutes)).toMatchObject({
      kind: 'deny',
      reason: 'proxy_identity',
    });
  });
});

describe('Istio ambient: the namespace labels the webhook’s cache holds', () => {
  const ambient = cfg('istio', { ambient: { enabled: true } });
  const bypass = template();
  bypass.metadata = {
    labels: { app: 'web' },
    annotations: { 'ambient.istio.io/bypass-inbound-capture': 'true' },
  } as never;
  it('an ambient namespace’s template that bypasses ztunnel is refused; with its labels unknown, left to its pods', () => {
    const known = admissionRoutes({
      config: ambient,
      nodes: verified,
      namespaces: { get: () => ({ 'istio.io/dataplane-mode': 'ambient' }) },
    });
    expect(known['/validate/workloads'](review(deployment(bypass)))).toMatchObject({
      kind: 'deny',
      reason: 'ambient_inbound_bypass',
    });
    const unknown = admissionRoutes({ config: ambient, nodes: verified, namespaces: { get: () => undefined } });
    expect(unknown['/validate/workloads'](review(deployment(bypass)))).toMatchObject({ kind: 'allow' });
  });
});
