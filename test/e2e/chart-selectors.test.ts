// The chart's webhook entries as the real apiserver applies them: every entry of both configurations is pointed
// at a recording webhook on loopback (its path names the entry) with its rules, selectors and match conditions
// exactly as rendered for mesh istio. Shows which pods reach meshgate and through which entry (never two), that
// bindings — the scheduler's and the legacy POST …/bindings — reach it, and which pod UPDATEs are sent.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { installChart } from './harness/suite.ts';

const NS = 'meshgate';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

interface Review {
  kind: 'mutate' | 'validate';
  entry: string;
  resource: string;
  subResource?: string;
  operation: string;
  namespace: string;
  name: string;
}

describe('the chart’s webhook entries on a real apiserver (mesh istio)', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;
  let server: Server;
  const reviews: Review[] = [];
  const about = (ns: string, name: string) => reviews.filter((r) => r.namespace === ns && r.name === name);

  beforeAll(async () => {
    cp = await startControlPlane({ nodes: [{ name: 'node-a' }] });
    core = cp.kc.makeApiClient(CoreV1Api);
    const pair = cp.ca.issue({ commonName: 'recorder', ipAddresses: ['127.0.0.1'] });
    server = createServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { request } = JSON.parse(body);
        const [, kind, entry] = (req.url ?? '').split('?')[0].split('/');
        const object = request.object ?? request.oldObject ?? {};
        reviews.push({
          kind: kind as Review['kind'],
          entry,
          resource: request.resource.resource,
          subResource: request.subResource,
          operation: request.operation,
          namespace: request.namespace,
          name: request.name ?? object.metadata?.name ?? object.metadata?.generateName,
        });
        res.setHeader('Content-Type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid: request.uid, allowed: true },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await installChart(cp, NS, '--set-json', 'config={"injection":{"podOptInNamespaceLabels":{"team":"a"}}}');
    const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
    const caBundle = Buffer.from(cp.ca.certPem).toString('base64');
    for (const kind of ['mutate', 'validate'] as const) {
      const config =
        kind === 'mutate'
          ? await admission.readMutatingWebhookConfiguration({ name: 'meshgate' })
          : await admission.readValidatingWebhookConfiguration({ name: 'meshgate' });
      const ops = config.webhooks!.map((w, i) => ({
        op: 'replace',
        path: `/webhooks/${i}/clientConfig`,
        value: { url: `https://127.0.0.1:${port}/${kind}/${w.name.split('.')[0]}`, caBundle },
      }));
      const patched = await cp.kubectl([
        'patch',
        `${kind === 'mutate' ? 'mutating' : 'validating'}webhookconfiguration`,
        'meshgate',
        '--type=json',
        '-p',
        JSON.stringify(ops),
      ]);
      expect(patched.code, patched.stderr).toBe(0);
    }
    const namespaces: Array<[string, Record<string, string>]> = [
      ['plain', {}],
      ['mg', { 'meshgate.io/inject': 'enabled' }],
      ['istio', { 'istio-injection': 'enabled' }],
      ['rev', { 'istio.io/rev': 'canary' }],
      ['rev-disabled', { 'istio.io/rev': 'default', 'istio-injection': 'disabled' }],
      ['all', { 'meshgate.io/inject': 'enabled', 'istio-injection': 'enabled', 'istio.io/rev': 'default' }],
      ['team-a', { team: 'a' }],
      ['mg-enforce', { 'meshgate.io/inject': 'enabled', 'meshgate.io/enforcement': 'enforce' }],
      ['istio-warn', { 'istio-injection': 'enabled', 'meshgate.io/enforcement': 'warn' }],
      ['plain-warn', { 'meshgate.io/enforcement': 'warn' }],
    ];
    for (const [name, labels] of namespaces) await core.createNamespace({ body: { metadata: { name, labels } } });
    for (const [name] of namespaces)
      await waitFor(`ServiceAccount ${name}/default`, () =>
        core.readNamespacedServiceAccount({ name: 'default', namespace: name }),
      );
    await core.patchNamespace(
      { name: NS, body: { metadata: { labels: { 'meshgate.io/inject': 'enabled', 'istio-injection': 'enabled' } } } },
      merge,
    );
    await core.patchNamespace(
      { name: 'kube-system', body: { metadata: { labels: { 'meshgate.io/inject': 'enabled' } } } },
      merge,
    );
  }, 300_000);

  afterAll(async () => {
    server?.close();
    await cp?.stop();
  });

  const pod = (name: string, labels: Record<string, string> = {}, extra: Partial<V1Pod['spec']> = {}): V1Pod => ({
    metadata: { name, labels },
    spec: { containers: [{ name: 'app', image: 'docker.io/library/nginx:1.27' }], ...extra },
  });

  // Every entry once per enforcement level (<entry> for enforce, -warn, -audit): unlabelled namespaces are at the
  // default, audit.
  it.each<[string, Record<string, string>, string | null]>([
    ['mg', {}, 'ns-meshgate-audit'],
    ['all', {}, 'ns-meshgate-audit'],
    ['istio', {}, 'ns-istio-injection-audit'],
    ['istio', { 'sidecar.istio.io/inject': 'false' }, 'ns-istio-injection-audit'],
    ['rev', {}, 'ns-istio-rev-audit'],
    ['rev-disabled', { 'sidecar.istio.io/inject': 'true' }, null],
    ['plain', {}, null],
    ['plain', { 'sidecar.istio.io/inject': 'true' }, 'pod-istio-inject-audit'],
    ['plain', { 'istio.io/rev': 'canary' }, 'pod-istio-rev-audit'],
    ['team-a', { 'meshgate.io/inject': 'true' }, 'pod-optin-audit'],
    ['team-a', { 'meshgate.io/inject': 'true', 'sidecar.istio.io/inject': 'true' }, 'pod-istio-inject-audit'],
    ['mg-enforce', {}, 'ns-meshgate'],
    ['istio-warn', {}, 'ns-istio-injection-warn'],
    ['plain-warn', { 'sidecar.istio.io/inject': 'true' }, 'pod-istio-inject-warn'],
    [NS, {}, null],
    ['kube-system', {}, null],
  ])('a pod in %s with labels %j is reviewed by entry %s, once per configuration', async (ns, labels, entry) => {
    const name = `p-${Math.random().toString(36).slice(2, 8)}`;
    await core.createNamespacedPod({ namespace: ns, body: pod(name, labels) });
    const creates = about(ns, name).filter((r) => r.resource === 'pods' && r.operation === 'CREATE' && !r.subResource);
    // A mutating webhook may be called a second time (reinvocationPolicy IfNeeded) only if another changed the pod.
    expect(creates.map((r) => `${r.kind}:${r.entry}`)).toEqual(entry ? [`mutate:${entry}`, `validate:${entry}`] : []);
  });

  it('the scheduler’s binding of a pod in a selected namespace is reviewed; a pod selected by its own labels is not', async () => {
    await core.createNamespacedPod({ namespace: 'istio', body: pod('bound') });
    await core.createNamespacedPod({
      namespace: 'plain',
      body: pod('bound-by-label', { 'sidecar.istio.io/inject': 'true' }),
    });
    await waitFor(
      'both pods scheduled',
      async () =>
        !!(await core.readNamespacedPod({ name: 'bound', namespace: 'istio' })).spec?.nodeName &&
        !!(await core.readNamespacedPod({ name: 'bound-by-label', namespace: 'plain' })).spec?.nodeName,
    );
    expect(
      about('istio', 'bound')
        .filter((r) => r.subResource === 'binding')
        .map((r) => `${r.kind}:${r.entry}:${r.resource}/${r.subResource}`),
    ).toEqual(['validate:ns-istio-injection-audit:pods/binding']);
    expect(about('plain', 'bound-by-label').filter((r) => r.subResource === 'binding')).toEqual([]);
  });

  it('the legacy POST /api/v1/namespaces/NS/bindings is reviewed as resource bindings', async () => {
    await core.createNamespacedPod({ namespace: 'mg', body: pod('legacy', {}, { schedulerName: 'nobody' }) });
    await core.createNamespacedBinding({
      namespace: 'mg',
      body: { metadata: { name: 'legacy' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-a' } },
    });
    expect(
      about('mg', 'legacy')
        .filter((r) => r.resource === 'bindings')
        .map((r) => `${r.kind}:${r.entry}:${r.operation}`),
    ).toEqual(['validate:ns-meshgate-audit:CREATE']);
  });

  it('pod UPDATEs: finalizers and owner references are not sent; labels, annotations, images and ephemeral containers are', async () => {
    await core.createNamespacedPod({ namespace: 'istio', body: pod('updated', {}, { schedulerName: 'nobody' }) });
    const updates = () =>
      about('istio', 'updated')
        .filter((r) => r.operation === 'UPDATE')
        .map((r) => `${r.kind}:${r.subResource ?? ''}`);
    const cm = await core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: 'istio' });
    await core.patchNamespacedPod(
      { name: 'updated', namespace: 'istio', body: { metadata: { finalizers: ['example.com/hold'] } } },
      merge,
    );
    await core.patchNamespacedPod(
      {
        name: 'updated',
        namespace: 'istio',
        body: {
          metadata: {
            ownerReferences: [
              { apiVersion: 'v1', kind: 'ConfigMap', name: 'kube-root-ca.crt', uid: cm.metadata!.uid! },
            ],
          },
        },
      },
      merge,
    );
    await core.patchNamespacedPod(
      { name: 'updated', namespace: 'istio', body: { metadata: { finalizers: null } } },
      merge,
    );
    expect(updates()).toEqual([]);
    await core.patchNamespacedPod(
      { name: 'updated', namespace: 'istio', body: { metadata: { labels: { tier: 'web' } } } },
      merge,
    );
    await core.patchNamespacedPod(
      {
        name: 'updated',
        namespace: 'istio',
        body: { metadata: { annotations: { 'traffic.sidecar.istio.io/excludeOutboundPorts': '5432' } } },
      },
      merge,
    );
    await core.patchNamespacedPod(
      {
        name: 'updated',
        namespace: 'istio',
        body: { spec: { containers: [{ name: 'app', image: 'docker.io/library/nginx:1.28' }] } },
      },
      strategic,
    );
    await core.patchNamespacedPodEphemeralcontainers(
      {
        name: 'updated',
        namespace: 'istio',
        body: { spec: { ephemeralContainers: [{ name: 'debug', image: 'docker.io/library/busybox:1.37' }] } },
      },
      strategic,
    );
    expect(updates()).toEqual(['validate:', 'validate:', 'validate:', 'validate:ephemeralcontainers']);
  });
});
