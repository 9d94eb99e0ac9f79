// The two webhook configurations as helm renders them: rules, selectors, the exclusions that keep meshgate from
// ever blocking its own pods, and the certificate wiring of both modes.
import { beforeAll, describe, expect, it } from 'vitest';
import { render, type Obj, type Rendered } from './helm.ts';

const NAME_EXCLUSION = 'kubernetes.io/metadata.name';

function only(cfg: Obj): Obj {
  expect(cfg.webhooks).toHaveLength(1);
  return cfg.webhooks[0];
}

describe('webhook configurations (default values)', () => {
  let r: Rendered;
  beforeAll(async () => {
    r = await render();
  });

  it('mutates pods on CREATE at /mutate with the admission settings meshgate relies on', () => {
    const w = only(r.one('MutatingWebhookConfiguration', 'meshgate'));
    expect(w.rules).toEqual([{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }]);
    expect(w.clientConfig).toEqual({ service: { name: 'meshgate', namespace: 'meshgate', path: '/mutate', port: 443 } });
    expect(w).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      sideEffects: 'None',
      reinvocationPolicy: 'IfNeeded',
      timeoutSeconds: 10,
      admissionReviewVersions: ['v1'],
    });
  });

  it('validates pods and pods/binding on CREATE at /validate', () => {
    const w = only(r.one('ValidatingWebhookConfiguration', 'meshgate'));
    expect(w.rules).toEqual([{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods', 'pods/binding'], scope: 'Namespaced' }]);
    expect(w.clientConfig.service).toEqual({ name: 'meshgate', namespace: 'meshgate', path: '/validate', port: 443 });
    expect(w).toMatchObject({ failurePolicy: 'Fail', matchPolicy: 'Equivalent', sideEffects: 'None', timeoutSeconds: 10, admissionReviewVersions: ['v1'] });
    expect(w.reinvocationPolicy).toBeUndefined();
  });

  it('selects opted-in namespaces and never meshgate’s own or the system namespaces', () => {
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const sel = only(r.one(kind)).namespaceSelector;
      expect(sel.matchLabels).toBeUndefined();
      expect(sel.matchExpressions).toContainEqual({ key: 'meshgate.io/inject', operator: 'In', values: ['enabled'] });
      const exclusion = sel.matchExpressions.find((e: Obj) => e.key === NAME_EXCLUSION);
      expect(exclusion).toEqual({ key: NAME_EXCLUSION, operator: 'NotIn', values: ['meshgate', 'kube-system', 'kube-public', 'kube-node-lease'] });
    }
  });

  it('self-managed certificates: caBundle is left empty and no cert-manager objects are rendered', () => {
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const cfg = r.one(kind);
      expect(only(cfg).clientConfig.caBundle).toBeUndefined();
      expect(cfg.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBeUndefined();
    }
    expect(r.all('Issuer')).toEqual([]);
    expect(r.all('Certificate')).toEqual([]);
  });
});

describe('webhook configurations (values)', () => {
  it('failurePolicy Ignore for the injector keeps the validating safety net on Fail', async () => {
    const r = await render({ webhook: { mutating: { failurePolicy: 'Ignore' }, timeoutSeconds: 5 } });
    expect(only(r.one('MutatingWebhookConfiguration'))).toMatchObject({ failurePolicy: 'Ignore', timeoutSeconds: 5 });
    expect(only(r.one('ValidatingWebhookConfiguration'))).toMatchObject({ failurePolicy: 'Fail', timeoutSeconds: 5 });
  });

  it('pod opt-in: a second entry per configuration, selected by the pod label in the allowed namespaces only', async () => {
    const r = await render({ config: { injection: { podOptInNamespaceLabels: { team: 'a' } } } });
    for (const [kind, path] of [['MutatingWebhookConfiguration', '/mutate'], ['ValidatingWebhookConfiguration', '/validate']]) {
      const hooks = r.one(kind).webhooks;
      expect(hooks, kind).toHaveLength(2);
      const optIn = hooks[1];
      expect(optIn.clientConfig.service.path).toBe(path);
      expect(optIn.objectSelector).toEqual({ matchLabels: { 'meshgate.io/inject': 'true' } });
      expect(optIn.namespaceSelector.matchLabels).toEqual({ team: 'a' });
      // Labelled namespaces stay with the first entry (no pod reviewed twice); meshgate's own never.
      expect(optIn.namespaceSelector.matchExpressions).toEqual([
        { key: 'meshgate.io/inject', operator: 'NotIn', values: ['enabled'] },
        { key: NAME_EXCLUSION, operator: 'NotIn', values: ['meshgate', 'kube-system', 'kube-public', 'kube-node-lease'] },
      ]);
      // Bindings carry no labels: the opt-in entry reviews pods only.
      expect(optIn.rules[0].resources).toEqual(['pods']);
    }
  });

  it('excludes the release namespace and configured system namespaces under another release name', async () => {
    const r = await render({ config: { systemNamespaces: ['kube-system', 'ops'] } }, { release: 'mesh', namespace: 'mesh-system' });
    const w = only(r.one('MutatingWebhookConfiguration', 'mesh-meshgate'));
    expect(w.clientConfig.service).toMatchObject({ name: 'mesh-meshgate', namespace: 'mesh-system' });
    expect(w.namespaceSelector.matchExpressions).toContainEqual({ key: NAME_EXCLUSION, operator: 'NotIn', values: ['mesh-system', 'kube-system', 'ops'] });
  });

  it('cert-manager: Issuer and Certificate for the Service, injected into both configurations', async () => {
    const r = await render({ certs: { mode: 'cert-manager' } });
    const cert = r.one('Certificate', 'meshgate-serving');
    expect(cert.metadata.namespace).toBe('meshgate');
    expect(cert.spec.secretName).toBe('meshgate-tls');
    expect(cert.spec.dnsNames).toEqual(['meshgate.meshgate.svc', 'meshgate.meshgate.svc.cluster.local']);
    const issuer = r.one('Issuer', 'meshgate-selfsigned');
    expect(issuer.spec).toEqual({ selfSigned: {} });
    expect(cert.spec.issuerRef).toEqual({ kind: 'Issuer', name: 'meshgate-selfsigned' });
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      expect(r.one(kind).metadata.annotations['cert-manager.io/inject-ca-from']).toBe('meshgate/meshgate-serving');
    }
  });

  it('cert-manager with an existing issuer renders no Issuer of its own', async () => {
    const issuerRef = { kind: 'ClusterIssuer', name: 'corp-ca' };
    const r = await render({ certs: { mode: 'cert-manager', certManager: { issuerRef } } });
    expect(r.all('Issuer')).toEqual([]);
    expect(r.one('Certificate').spec.issuerRef).toEqual(issuerRef);
  });
});
