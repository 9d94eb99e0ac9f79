/**
 * Self-managed certificates in a real cluster: two replicas share one Secret, and the caBundle they patch into
 * the webhook configurations is what the real apiserver then trusts when it calls them — also across a CA
 * rotation, with the apiserver (Go's crypto/x509 and crypto/tls) opening a new TLS connection for every call.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { AdmissionregistrationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { waitFor } from './harness/index.ts';
import { apiError, createNamespace, names, restrictedPod } from './meshgate.ts';
import { testConfig } from '../support/config.ts';
import { startServer, type RunningServer, type ServeOptions } from '../../src/server/start.ts';
import { SecretSource } from '../../src/tls/secret-source.ts';
import { kubeSecretStore } from '../../src/kube/secret-store.ts';
import { caBundleHolds } from '../../src/kube/ca-bundle.ts';
import { splitPem } from '../../src/tls/trust-state.ts';
import { X509Certificate } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { fakeClock, type Event } from '../tls/rotation-helpers.ts';
import { daemonClient } from './daemon-client.ts';
import { shared } from './harness/shared.ts';
import { startVerdictCluster } from './harness/clusters.ts';

const replicas: RunningServer[] = [];

/** The cluster this file's tests share: a verified node, meshgate's namespace and an app namespace it guards. */
const s = shared(async (stopLater) => {
  const { cp } = await startVerdictCluster(stopLater, { 'node-a': true });
  await createNamespace(cp, 'meshgate');
  await createNamespace(cp, 'app', { 'meshgate.io/inject': 'enabled' });
  stopLater(async () => {
    for (const r of replicas) await r.shutdown();
  });
  return { cp };
});

/**
 * A meshgate replica in this process (port 0 on 127.0.0.1), shut down after the file's tests; by default its pair in
 * Secret meshgate/meshgate-tls, its caBundle in webhook configuration meshgate; `extra` overrides.
 */
async function replica(extra: Partial<ServeOptions> = {}): Promise<RunningServer> {
  const r = await startServer({
    config: testConfig('custom'),
    port: 0,
    host: '127.0.0.1',
    tlsSans: ['127.0.0.1'],
    kube: daemonClient(s.cp.kc),
    drainSeconds: 0,
    logger: pino({ level: 'warn' }),
    certSecret: { namespace: 'meshgate', name: 'meshgate-tls' },
    webhookConfigName: 'meshgate',
    ...extra,
  });
  replicas.push(r);
  return r;
}

describe('self-managed certificates shared through a Secret', () => {
  it('two replicas serve one pair, patch the caBundle, and the apiserver trusts them', async () => {
    const admission = s.cp.kc.makeApiClient(AdmissionregistrationV1Api);
    // Registered as a chart would: no caBundle yet, meshgate fills it in.
    const [a, b] = await Promise.all([replica(), replica()]);
    const webhook = (server: RunningServer, path: string, resources: string[]) => ({
      name: `${path}.meshgate.io`,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      namespaceSelector: { matchLabels: { 'meshgate.io/inject': 'enabled' } },
      clientConfig: { url: `${server.url}/${path}` },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources }],
    });
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name: 'meshgate' }, webhooks: [webhook(a, 'mutate', ['pods'])] } as never,
    });
    await admission.createValidatingWebhookConfiguration({
      body: { metadata: { name: 'meshgate' }, webhooks: [webhook(b, 'validate', ['pods', 'pods/binding'])] } as never,
    });

    expect(a.certs.current().cert).toBe(b.certs.current().cert);
    const secret = await s.cp.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: 'meshgate', name: 'meshgate-tls' });
    expect(Buffer.from(secret.data!['ca.crt'], 'base64').toString()).toBe(a.ca);

    // The replicas retry every 10 s until the configurations exist; wait for both bundles.
    const want = Buffer.from(a.ca!).toString('base64');
    await waitFor(
      'caBundle patched into both webhook configurations',
      async () => {
        const m = await admission.readMutatingWebhookConfiguration({ name: 'meshgate' });
        const v = await admission.readValidatingWebhookConfiguration({ name: 'meshgate' });
        return m.webhooks![0].clientConfig.caBundle === want && v.webhooks![0].clientConfig.caBundle === want;
      },
      { timeoutMs: 30_000 },
    );

    const pod = await s.cp.kc
      .makeApiClient(CoreV1Api)
      .createNamespacedPod({ namespace: 'app', body: restrictedPod('trusted') });
    expect(names(pod).init).toEqual(['meshgate-validate', 'meshgate-proxy']);
  });
});

describe('a CA rotation while the apiserver keeps calling', () => {
  it('every call succeeds; both configurations trust both CAs during the overlap, then only the new one', async () => {
    const admission = s.cp.kc.makeApiClient(AdmissionregistrationV1Api);
    const core = s.cp.kc.makeApiClient(CoreV1Api);
    // Only the rotating replicas are called from here on.
    await admission.deleteMutatingWebhookConfiguration({ name: 'meshgate' }).catch(() => undefined);
    await admission.deleteValidatingWebhookConfiguration({ name: 'meshgate' }).catch(() => undefined);
    const NAME = 'meshgate-rotation';
    // Serving certificates live 90 s and CAs 180 s on a clock that moves 5 s per poll (the certificates are
    // backdated 5 min, so it may run that far ahead of the apiserver's).
    const clock = fakeClock();
    const events: Event[] = [];
    const log = {
      info: (f: object) => void events.push(f as Event),
      warn: (f: object) => void events.push(f as Event),
    };
    const source = (id: string) =>
      new SecretSource({
        store: kubeSecretStore(daemonClient(s.cp.kc), 'meshgate', NAME),
        sans: ['127.0.0.1'],
        replicaId: id,
        where: `Secret meshgate/${NAME}`,
        validityMs: 90_000,
        caValidityMs: 180_000,
        overlapMs: 20_000,
        pollMs: 5_000,
        manual: true,
        now: clock.now,
        log,
        trustCheck: (bundle) => caBundleHolds(daemonClient(s.cp.kc), NAME, bundle),
      });
    const calls = { mutate: 0, validate: 0 };
    const start = (id: string) =>
      replica({
        certSecret: undefined,
        certSource: source(id),
        webhookConfigName: NAME,
        // One request per connection: every call the apiserver makes is a new TLS handshake.
        limits: { maxRequestsPerSocket: 1 },
        onReview: (route) => void calls[route as keyof typeof calls]++,
      });
    const a = await start('a');
    const b = await start('b');
    const webhook = (server: RunningServer, path: string, resources: string[]) => ({
      name: `${path}.meshgate.io`,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
      namespaceSelector: { matchLabels: { 'meshgate.io/inject': 'enabled' } },
      clientConfig: { url: `${server.url}/${path}` },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources }],
    });
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name: NAME }, webhooks: [webhook(a, 'mutate', ['pods'])] } as never,
    });
    await admission.createValidatingWebhookConfiguration({
      body: { metadata: { name: NAME }, webhooks: [webhook(b, 'validate', ['pods'])] } as never,
    });

    const configBundles = async () => {
      const m = await admission.readMutatingWebhookConfiguration({ name: NAME });
      const v = await admission.readValidatingWebhookConfiguration({ name: NAME });
      return [m, v].map((c) => Buffer.from(c.webhooks![0].clientConfig.caBundle ?? '', 'base64').toString());
    };
    /** The keepers patch asynchronously (retrying every 10 s): wait for both configurations to hold `bundle`. */
    const published = (bundle: string) =>
      waitFor(
        "both configurations to hold the replicas' bundle",
        async () => (await configBundles()).every((x) => x === bundle),
        { timeoutMs: 30_000 },
      );
    await published(a.certs.current().ca!);
    // Connections accepted by the two replicas: each is one TLS handshake with the apiserver.
    let connections = 0;
    const ports = new Set([a.port, b.port]);
    const accepted = (m: unknown) => void (ports.has((m as { socket: Socket }).socket.localPort ?? 0) && connections++);
    diagnostics.subscribe('net.server.socket', accepted);

    let created = 0;
    const failures: string[] = [];
    let overlapSeen = 0;
    const poll = async () => {
      clock.advance(5_000);
      for (const r of [a, b]) await (r.certs as SecretSource).sync();
      if (a.certs.current().ca === b.certs.current().ca) await published(a.certs.current().ca!);
      const bundles = await configBundles();
      if (bundles.every((x) => splitPem(x).length === 2)) overlapSeen++;
      for (let i = 0; i < 3; i++) {
        try {
          await core.createNamespacedPod({ namespace: 'app', body: restrictedPod(`rot-${created}`), dryRun: 'All' });
          created++;
        } catch (err) {
          failures.push(apiError(err));
        }
      }
    };
    const steps = () => events.map((e) => e.event).filter((e) => !e.startsWith('waiting_'));
    const firstCa = new X509Certificate(a.certs.current().ca!).fingerprint256;
    for (let i = 0; i < 40 && !steps().includes('ca_retired'); i++) await poll();
    for (let i = 0; i < 3; i++) await poll();
    diagnostics.unsubscribe('net.server.socket', accepted);

    console.log(`[certs-e2e] steps ${steps().join(' → ')}`);
    console.log(
      `[certs-e2e] ${created} pods admitted (dry run), ${failures.length} refused; webhook calls (one TLS handshake each): ` +
        `mutate ${calls.mutate}, validate ${calls.validate}; TLS connections accepted ${connections}; polls with both CAs in both configurations: ${overlapSeen}`,
    );
    expect(failures).toEqual([]);
    expect(steps()).toEqual(expect.arrayContaining(['ca_prepared', 'ca_promoted', 'ca_retired']));
    expect(overlapSeen).toBeGreaterThan(0);
    const [m, v] = await configBundles();
    expect(splitPem(m)).toHaveLength(1);
    expect(v).toBe(m);
    expect(new X509Certificate(m).fingerprint256).not.toBe(firstCa);
    expect(new X509Certificate(m).checkIssued(new X509Certificate(m))).toBe(true);
    expect(new X509Certificate(a.certs.current().cert).checkIssued(new X509Certificate(m))).toBe(true);
    expect(calls.mutate).toBe(created);
    expect(connections).toBeGreaterThanOrEqual(calls.mutate + calls.validate);
  }, 600_000);
});
