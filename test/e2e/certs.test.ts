/**
 * Self-managed certificates in a real cluster: two replicas share one Secret, and the caBundle they patch into
 * the webhook configurations is what the real apiserver then trusts when it calls them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { AdmissionregistrationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { createNamespace, names, restrictedPod } from './meshgate.ts';
import { buildConfig } from '../../src/config/load.ts';
import { startServer, type RunningServer } from '../../src/server/start.ts';

let cp: ControlPlane;
const replicas: RunningServer[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'node-a', labels: { 'meshgate.io/cni-verified': 'true' }, kubeletVersion: 'v1.34.2' }] });
  await createNamespace(cp, 'meshgate');
  await createNamespace(cp, 'app', { 'meshgate.io/inject': 'enabled' });
}, 300_000);

afterAll(async () => {
  for (const r of replicas) await r.shutdown();
  await cp?.stop();
});

async function replica(): Promise<RunningServer> {
  const r = await startServer({
    config: buildConfig({}), port: 0, host: '127.0.0.1', tlsSans: ['127.0.0.1'], kc: cp.kc, drainSeconds: 0,
    logger: pino({ level: 'warn' }), certSecret: { namespace: 'meshgate', name: 'meshgate-tls' }, webhookConfigName: 'meshgate',
  });
  replicas.push(r);
  return r;
}

describe('self-managed certificates shared through a Secret', () => {
  it('two replicas serve one pair, patch the caBundle, and the apiserver trusts them', async () => {
    const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
    // Registered as a chart would: no caBundle yet, meshgate fills it in.
    const [a, b] = await Promise.all([replica(), replica()]);
    const webhook = (server: RunningServer, path: string, resources: string[]) => ({
      name: `${path}.meshgate.io`, sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Fail',
      namespaceSelector: { matchLabels: { 'meshgate.io/inject': 'enabled' } },
      clientConfig: { url: `${server.url}/${path}` },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources }],
    });
    await admission.createMutatingWebhookConfiguration({ body: { metadata: { name: 'meshgate' }, webhooks: [webhook(a, 'mutate', ['pods'])] } as never });
    await admission.createValidatingWebhookConfiguration({ body: { metadata: { name: 'meshgate' }, webhooks: [webhook(b, 'validate', ['pods', 'pods/binding'])] } as never });

    expect(a.certs.current().cert).toBe(b.certs.current().cert);
    const secret = await cp.kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: 'meshgate', name: 'meshgate-tls' });
    expect(Buffer.from(secret.data!['ca.crt'], 'base64').toString()).toBe(a.ca);

    // The replicas retry every 10 s until the configurations exist; wait for both bundles.
    const want = Buffer.from(a.ca!).toString('base64');
    await waitFor('caBundle patched into both webhook configurations', async () => {
      const m = await admission.readMutatingWebhookConfiguration({ name: 'meshgate' });
      const v = await admission.readValidatingWebhookConfiguration({ name: 'meshgate' });
      return m.webhooks![0].clientConfig.caBundle === want && v.webhooks![0].clientConfig.caBundle === want;
    }, { timeoutMs: 30_000 });

    const pod = await cp.kc.makeApiClient(CoreV1Api).createNamespacedPod({ namespace: 'app', body: restrictedPod('trusted') });
    expect(names(pod).init).toEqual(['meshgate-validate', 'meshgate-proxy']);
  });
});
