// certs.mode=cert-manager for real (issue 23 §6): cert-manager v1.21's own controller and CA injector
// (test/e2e/harness/cert-manager.ts) run against the harness apiserver; the chart is installed with real helm and its
// Issuers and Certificates are issued by them; meshgate's webhook runs in this process as the chart's Deployment runs
// it, from the issued Secret mounted as files (--cert-file/--key-file, hot reload) that a kubelet-like projector
// (secret-volume.ts) updates some seconds after each change, as a kubelet does; the CA injector fills the caBundle of
// the chart's two webhook configurations, which stay Service-based, with failurePolicy Fail. Pods are then created
// through the webhook at a steady rate while renewals of the serving certificate and of the CA are forced through
// the API (what `cmctl renew` does); not one create may be refused. Figures printed.
//
// The apiserver reaches the webhook through the chart's Service, replaced by an ExternalName Service naming
// 127.0.0.1 (the apiserver dials `<externalName>:<port>` and still verifies the certificate for the Service's name,
// meshgate.meshgate.svc), with the webhook configurations' service port set to the one this process listens on.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdmissionregistrationV1Api, CoreV1Api } from '@kubernetes/client-node';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/start.ts';
import { chartDir } from '../chart/helm.ts';
import { CUSTOM_REQUIRED } from '../chart/profiles.ts';
import { testConfig } from '../support/config.ts';
import { startCertManager } from './harness/cert-manager.ts';
import { describeError, waitFor, type ControlPlane } from './harness/index.ts';
import {
  createPods,
  describeBundle,
  percentile,
  publicKey,
  renew,
  sampleCaBundles,
  secretData,
  serial,
} from './cert-renewal.ts';
import { createNamespace, restrictedPod } from './meshgate.ts';
import { SecretVolume } from './secret-volume.ts';
import { daemonClient } from './daemon-client.ts';
import { shared } from './harness/shared.ts';
import { startVerdictCluster } from './harness/clusters.ts';

const NS = 'meshgate';
const APP = 'app';
const SERVING = 'meshgate-serving';
const SECRET = 'meshgate-tls';
/** The kubelet's lag in rewriting a mounted Secret (up to its 1 min sync period in a cluster), shortened. */
const PROJECTION_DELAY_MS = 5_000;
const PODS_PER_SECOND = 8;
const MIN_SECONDS = 60;
const CA = 'meshgate-ca';
/**
 * The renewals forced during the run, in order: the serving certificate twice, the chart's CA, then the serving
 * certificate twice more, which cert-manager now signs with the renewed CA (so the CA injector changes caBundle
 * while the webhook still serves the pair signed before the CA's renewal).
 */
const PLAN = ['serving', 'serving', 'ca', 'serving', 'serving'] as const;

const log = (s: string) => process.stdout.write(`[cert-manager e2e] ${s}\n`);

const INJECTORS = [
  ['merges new CAs into caBundle (CAInjectorMerging, on in v1.21)', {}],
  ['replaces caBundle (CAInjectorMerging=false, as before that gate)', { CAInjectorMerging: false }],
] as const;

describe.each(INJECTORS)('certs.mode=cert-manager, cert-manager v1.21 whose CA injector %s', (_name, gates) => {
  const volumeErrors: string[] = [];

  /**
   * The cluster these tests share: a verified node, cert-manager, the chart installed with certs.mode=cert-manager,
   * and meshgate's server in this process serving the pair from the Secret as the kubelet would project it.
   */
  const s = shared(async (stopLater) => {
    const { cp } = await startVerdictCluster(stopLater, { 'node-a': true });
    const cm = stopLater(await startCertManager(cp, { cainjectorFeatureGates: gates }));
    log(
      `cert-manager ${cm.manifest.certManagerVersion}: controller pid ${cm.controller.pid}, cainjector pid ${cm.cainjector.pid}`,
    );
    await createNamespace(cp, NS);
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-values-'));
    try {
      const values = {
        mesh: 'custom',
        config: CUSTOM_REQUIRED,
        nodeAgent: { enabled: false },
        certs: { mode: 'cert-manager' },
      };
      writeFileSync(join(dir, 'values.json'), JSON.stringify(values));
      const res = await cp.helm(['install', 'meshgate', chartDir, '--namespace', NS, '-f', join(dir, 'values.json')]);
      expect(res.code, res.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await createNamespace(cp, APP, { 'meshgate.io/inject': 'enabled' });

    const volume = stopLater(
      new SecretVolume({
        kc: cp.kc,
        namespace: NS,
        name: SECRET,
        dir: join(cp.dir, 'webhook-tls'),
        delayMs: PROJECTION_DELAY_MS,
        onError: (err) => volumeErrors.push(describeError(err)),
      }),
    );
    await volume.start();
    const server = stopLater(
      await startServer({
        // The default `apps.privileges: restricted`, as the chart runs it.
        config: testConfig('custom', { apps: { privileges: 'restricted' } }),
        port: 0,
        host: '127.0.0.1',
        tlsSans: [],
        certFile: volume.certFile,
        keyFile: volume.keyFile,
        kube: daemonClient(cp.kc),
        drainSeconds: 0,
        logger: pino({ level: process.env.MESHGATE_E2E_LOG ?? 'warn' }),
      }),
    );
    await server.synced;
    await pointServiceHere(cp, server.port);
    // The CA injector puts the serving certificate's CA into every entry of both configurations (a merging one
    // keeps any CA it injected before next to it).
    const bundles = sampleCaBundles(cp.kc, 'meshgate');
    let ca = '';
    await waitFor(
      'caBundle injected into every webhook entry',
      async () => {
        ca = (await secretData(cp.kc, NS, SECRET))['ca.crt'];
        await bundles.read();
        const now = bundles.seen.at(-1)?.bundles ?? [];
        return now.length > 0 && now.every((b) => b.includes(ca.trim()));
      },
      {
        timeoutMs: 60_000,
        describe: () =>
          `Secret's ca.crt: ${describeBundle(ca)}; caBundles: ${bundles.seen.at(-1)?.bundles.map(describeBundle).join(', ')}\n` +
          cm.describe(),
      },
    );
    bundles.stop();
    await waitFor('a pod admitted through the webhook', () =>
      cp.kc
        .makeApiClient(CoreV1Api)
        .createNamespacedPod({ namespace: APP, body: restrictedPod('probe', { nodeName: 'node-a' }) }),
    );
    return { cp, cm, volume, server };
  }, 600_000);

  it('renewals during a steady stream of pod creates refuse none', async () => {
    const start = Date.now();
    const bundles = sampleCaBundles(s.cp.kc, 'meshgate', start);
    let renewing = true;
    const load = createPods({
      kc: s.cp.kc,
      namespace: APP,
      pod: (name) => restrictedPod(name, { nodeName: 'node-a' }),
      perSecond: PODS_PER_SECOND,
      until: () => !renewing && Date.now() - start >= MIN_SECONDS * 1000,
    });
    const renewals: Array<{ what: string; at: number; issuedAt: number; servedAt: number; from: string; to: string }> =
      [];
    const caKeys: string[] = [];
    try {
      await sleep(5_000);
      for (const what of PLAN) {
        const at = Date.now() - start;
        const { before, after } = await renew(s.cp.kc, NS, what === 'serving' ? SERVING : CA, () => s.cm.describe(40));
        const issuedAt = Date.now() - start;
        if (what === 'ca') caKeys.push(publicKey(before), publicKey(after['tls.crt']));
        if (what === 'serving') {
          await waitFor(
            'the webhook serving the renewed certificate',
            () => s.server.certs.current().cert === after['tls.crt'],
            {
              timeoutMs: PROJECTION_DELAY_MS + 30_000,
              describe: () =>
                `volume swaps: ${JSON.stringify(s.volume.projections.slice(-3))}; errors: ${volumeErrors.slice(-3)}`,
            },
          );
        }
        renewals.push({
          what,
          at,
          issuedAt,
          servedAt: Date.now() - start,
          from: serial(before),
          to: serial(after['tls.crt']),
        });
        await sleep(3_000);
      }
    } finally {
      renewing = false;
    }
    const { outcomes, skipped, seconds } = await load;
    bundles.stop();
    s.cm.assertRunning();

    const refused = outcomes.filter((o) => o.error);
    const ms = outcomes.map((o) => o.ms);
    log(
      `${outcomes.length} pod creates in ${seconds.toFixed(1)} s (${(outcomes.length / seconds).toFixed(1)}/s, ` +
        `${skipped} ticks skipped at the in-flight cap): ${outcomes.length - refused.length} admitted, ${refused.length} refused`,
    );
    log(
      `create latency ms: p50 ${percentile(ms, 50)}, p95 ${percentile(ms, 95)}, p99 ${percentile(ms, 99)}, max ${Math.max(...ms)}`,
    );
    for (const r of renewals) {
      const window = outcomes.filter((o) => o.at >= r.at && o.at <= r.servedAt + 2_000);
      log(
        `renewal of ${r.what} at +${(r.at / 1000).toFixed(1)} s: issued +${(r.issuedAt / 1000).toFixed(1)} s, ` +
          `served +${(r.servedAt / 1000).toFixed(1)} s (serial ${r.from.slice(0, 8)}… → ${r.to.slice(0, 8)}…); ` +
          `${window.length} creates meanwhile, ${window.filter((o) => o.error).length} refused, ` +
          `max ${Math.max(0, ...window.map((o) => o.ms))} ms`,
      );
    }
    for (const b of bundles.seen)
      log(`caBundle at +${(b.at / 1000).toFixed(1)} s: ${[...new Set(b.bundles)].map(describeBundle).join(' | ')}`);
    if (refused.length > 0) log(`first refusal: ${refused[0].error}`);
    expect(volumeErrors).toEqual([]);
    expect(renewals.map((r) => r.what)).toEqual([...PLAN]);
    expect(new Set(renewals.map((r) => r.to)).size).toBe(PLAN.length);
    // The stream ran through every renewal (how many creates a loaded machine manages is printed above, not judged).
    for (const r of renewals)
      expect(
        outcomes.filter((o) => o.at >= r.at && o.at <= r.servedAt + 2_000).length,
        `creates during the renewal of ${r.what}`,
      ).toBeGreaterThan(0);
    // The CA was renewed with its key kept (rotationPolicy Never), and the apiserver ended up trusting the renewed CA.
    expect(caKeys).toHaveLength(2);
    expect(caKeys[1]).toBe(caKeys[0]);
    const finalCa = (await secretData(s.cp.kc, NS, CA))['tls.crt'];
    expect(bundles.seen.at(-1)?.bundles.every((b) => b.includes(finalCa.trim()))).toBe(true);
    expect(refused.length, `${refused.length} creates refused, the first: ${refused[0]?.error}`).toBe(0);
  }, 600_000);
});

/**
 * The chart's Service, as an ExternalName naming 127.0.0.1, and the webhook configurations' service port set to
 * `port`: the apiserver then calls this process with the TLS server name meshgate.meshgate.svc.
 */
async function pointServiceHere(cp: ControlPlane, port: number): Promise<void> {
  const core = cp.kc.makeApiClient(CoreV1Api);
  await core.deleteNamespacedService({ namespace: NS, name: 'meshgate' });
  await core.createNamespacedService({
    namespace: NS,
    body: { metadata: { name: 'meshgate' }, spec: { type: 'ExternalName', externalName: '127.0.0.1' } },
  });
  const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
  for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration']) {
    const config = kind.startsWith('mutating')
      ? await admission.readMutatingWebhookConfiguration({ name: 'meshgate' })
      : await admission.readValidatingWebhookConfiguration({ name: 'meshgate' });
    const ops = (config.webhooks ?? []).map((_w, i) => ({
      op: 'replace',
      path: `/webhooks/${i}/clientConfig/service/port`,
      value: port,
    }));
    const res = await cp.kubectl(['patch', kind, 'meshgate', '--type=json', '-p', JSON.stringify(ops)]);
    if (res.code !== 0) throw new Error(`repointing ${kind} meshgate: ${res.stderr}`);
  }
}
