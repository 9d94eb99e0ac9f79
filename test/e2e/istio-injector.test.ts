/**
 * Istio's own sidecar injector (istio.io/istio 1.27.0's pkg/kube/inject, built by scripts/build-istio.sh) through a
 * real kube-apiserver, registered with the MutatingWebhookConfiguration its istio-discovery chart renders: the
 * reference meshgate is compared with. Figures (admission latency, requests/s) are printed, never asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { AppsV1Api, CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import {
  renderIstioDiscovery,
  startControlPlane,
  startIstioInjector,
  waitFor,
  waitForPodsRunning,
  type ControlPlane,
  type IstioInjector,
} from './harness/index.ts';
import { deployment } from './workloads.ts';

const PROXY_IMAGE = 'docker.io/istio/proxyv2:1.27.0';
/** Istio enables native sidecars when every node's kubelet is at least 1.33 (DetectNativeSidecar). */
const NEW_KUBELET = 'v1.34.2';
const OLD_KUBELET = 'v1.32.9';
const CORPUS_POD = new URL('../../../shared/corpus/admission/pepr__admission-create-pod.json', import.meta.url);

let cp: ControlPlane;
let istio: IstioInjector;
let core: CoreV1Api;

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'node-new', kubeletVersion: NEW_KUBELET }] });
  core = cp.kc.makeApiClient(CoreV1Api);
  istio = await startIstioInjector(cp);
  await istio.register();
  await createNamespace('mesh', { 'istio-injection': 'enabled' });
}, 300_000);

afterAll(async () => {
  await istio?.stop();
  await cp?.stop();
});

async function createNamespace(name: string, labels: Record<string, string>) {
  await core.createNamespace({ body: { metadata: { name, labels } } });
  await waitFor(
    `serviceaccount ${name}/default`,
    () => core.readNamespacedServiceAccount({ name: 'default', namespace: name }),
    { timeoutMs: 30_000 },
  );
}

function pod(
  name: string,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
  nodeName?: string,
): V1Pod {
  return {
    metadata: { name, labels: { app: name, ...meta.labels }, annotations: meta.annotations },
    spec: {
      nodeName,
      containers: [{ name: 'app', image: 'registry.example/app:1', ports: [{ containerPort: 8080 }] }],
    },
  };
}

const names = (cs: V1Container[] | undefined) => (cs ?? []).map((c) => c.name);
const byName = (cs: V1Container[] | undefined, name: string) => (cs ?? []).find((c) => c.name === name);

/** The apiserver's own histogram of calls to one webhook: count and summed seconds, from /metrics. */
async function webhookCalls(webhook: string): Promise<{ count: number; sum: number }> {
  const r = await cp.kubectl(['get', '--raw', '/metrics']);
  const read = (series: string) => {
    const line = r.stdout
      .split('\n')
      .find(
        (l) =>
          l.startsWith(`apiserver_admission_webhook_admission_duration_seconds_${series}{`) &&
          l.includes(`name="${webhook}"`) &&
          l.includes('operation="CREATE"') &&
          l.includes('type="admit"') &&
          l.includes('rejected="false"'),
      );
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };
  return { count: read('count'), sum: read('sum') };
}

describe('Istio 1.27.0 injector through the real apiserver', () => {
  it('injects Deployment pods in an istio-injection=enabled namespace: istio-init and istio-proxy (native sidecar)', async () => {
    const webhook = 'namespace.sidecar-injector.istio.io';
    const before = await webhookCalls(webhook);
    const spec = pod('web').spec;
    await cp.kc
      .makeApiClient(AppsV1Api)
      .createNamespacedDeployment({ namespace: 'mesh', body: deployment('web', spec, 2) });
    const pods = await waitForPodsRunning(cp.kc, 'mesh', 'app=web', 2, { timeoutMs: 90_000 });
    for (const p of pods) {
      expect(names(p.spec!.initContainers)).toEqual(['istio-init', 'istio-proxy']);
      expect(names(p.spec!.containers)).toEqual(['app']);
      const proxy = byName(p.spec!.initContainers, 'istio-proxy')!;
      expect(proxy.image).toBe(PROXY_IMAGE);
      expect(proxy.restartPolicy).toBe('Always');
      const init = byName(p.spec!.initContainers, 'istio-init')!;
      expect(init.image).toBe(PROXY_IMAGE);
      expect(init.args?.[0]).toBe('istio-iptables');
      expect(init.securityContext?.capabilities?.add).toEqual(expect.arrayContaining(['NET_ADMIN', 'NET_RAW']));
      const status = JSON.parse(p.metadata!.annotations!['sidecar.istio.io/status']) as Record<string, unknown>;
      expect(status).toMatchObject({
        initContainers: ['istio-init', 'istio-proxy'],
        containers: null,
        revision: 'default',
      });
    }
    const after = await webhookCalls(webhook);
    expect(after.count - before.count).toBe(2);
    console.log(
      `[istio] Deployment pods: apiserver-reported mean webhook latency ${(((after.sum - before.sum) / 2) * 1000).toFixed(1)} ms over 2 calls`,
    );
  });

  it('leaves pods opted out with sidecar.istio.io/inject: "false" untouched (annotation: Istio declines; label: never called)', async () => {
    const annotated = await core.createNamespacedPod({
      namespace: 'mesh',
      body: pod('opt-out-annotation', { annotations: { 'sidecar.istio.io/inject': 'false' } }),
    });
    expect(names(annotated.spec!.initContainers)).toEqual([]);
    expect(names(annotated.spec!.containers)).toEqual(['app']);
    expect(annotated.metadata!.annotations!['sidecar.istio.io/status']).toBeUndefined();
    expect(istio.logs()).toMatch(
      /pod=mesh\/opt-out-annotation.*Skipping due to policy check|Skipping due to policy check.*pod=mesh\/opt-out-annotation/,
    );

    const webhook = 'namespace.sidecar-injector.istio.io';
    const before = await webhookCalls(webhook);
    const labelled = await core.createNamespacedPod({
      namespace: 'mesh',
      body: pod('opt-out-label', { labels: { 'sidecar.istio.io/inject': 'false' } }),
    });
    expect(names(labelled.spec!.initContainers)).toEqual([]);
    expect(names(labelled.spec!.containers)).toEqual(['app']);
    expect((await webhookCalls(webhook)).count).toBe(before.count);
  });

  it('prints the admission latency of single pods as the apiserver reports it', async () => {
    const webhook = 'namespace.sidecar-injector.istio.io';
    const ms: string[] = [];
    for (let i = 0; i < 5; i++) {
      const before = await webhookCalls(webhook);
      const p = await core.createNamespacedPod({ namespace: 'mesh', body: pod(`single-${i}`) });
      expect(names(p.spec!.initContainers)).toEqual(['istio-init', 'istio-proxy']);
      const after = await webhookCalls(webhook);
      expect(after.count - before.count).toBe(1);
      ms.push(((after.sum - before.sum) * 1000).toFixed(1));
    }
    console.log(
      `[istio] per-pod webhook latency (apiserver_admission_webhook_admission_duration_seconds): ${ms.join(', ')} ms`,
    );
  });

  it('a pod bound to a node with an older kubelet gets istio-proxy as a regular container (Node informer)', async () => {
    await cp.addNode('node-old', { kubeletVersion: OLD_KUBELET });
    const pinned = pod('pinned-old', {}, 'node-old');
    // The injector learns about node-old from its Node informer, a moment after the apiserver has it.
    await waitFor(
      'the injector to see node-old',
      async () => {
        const dry = await core.createNamespacedPod({ namespace: 'mesh', body: pinned, dryRun: 'All' });
        return names(dry.spec!.containers).includes('istio-proxy');
      },
      { timeoutMs: 30_000 },
    );
    const p = await core.createNamespacedPod({ namespace: 'mesh', body: pinned });
    expect(names(p.spec!.initContainers)).toEqual(['istio-init']);
    expect(names(p.spec!.containers)).toEqual(['app', 'istio-proxy']);
    expect(byName(p.spec!.containers, 'istio-proxy')!.image).toBe(PROXY_IMAGE);
  });
});

describe('chart rendering', () => {
  it('hub, tag and values overrides reach the values and mesh config istiod would get', async () => {
    const r = await renderIstioDiscovery(cp, {
      hub: 'localhost/meshgate-e2e',
      tag: 'dev',
      values: { meshConfig: { accessLogFile: '/dev/stdout' } },
    });
    const values = JSON.parse(r.injectorValues) as {
      global: { hub: string; tag: string };
      pilot: { cni: { enabled: boolean } };
    };
    expect(values.global).toMatchObject({ hub: 'localhost/meshgate-e2e', tag: 'dev' });
    expect(values.pilot.cni.enabled).toBe(false);
    expect(r.mesh).toContain('accessLogFile: /dev/stdout');
    expect(istio.rendered.injectorValues).toContain('"hub": "docker.io/istio"');
  });
});

describe('load figure (printed only)', () => {
  it('requests/s of /inject on one corpus pod over HTTPS keep-alive', async () => {
    const raw = JSON.parse(readFileSync(CORPUS_POD, 'utf8')) as Record<string, unknown>;
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: raw });
    const first = JSON.parse(await post(istio.url, body, istio.caPem)) as {
      response: { uid: string; allowed: boolean; patch?: string };
    };
    expect(first.response.uid).toBe(raw.uid);
    expect(first.response.allowed).toBe(true);
    expect(Buffer.from(first.response.patch!, 'base64').toString()).toContain('"name":"istio-proxy"');

    // Bounded in time and count: 4 connections (2 cores: client and server share them) for 3 s or 20 000 requests.
    const agent = new Agent({ keepAlive: true, maxSockets: 4, ca: istio.caPem });
    const deadline = Date.now() + 3_000;
    let done = 0;
    const worker = async () => {
      while (Date.now() < deadline && done < 20_000) {
        await post(istio.url, body, istio.caPem, agent);
        done++;
      }
    };
    const t0 = performance.now();
    await Promise.all([worker(), worker(), worker(), worker()]);
    const seconds = (performance.now() - t0) / 1000;
    agent.destroy();
    expect(done).toBeGreaterThan(0);
    console.log(
      `[istio] /inject, corpus pod ${CORPUS_POD.pathname.split('/').pop()} (${body.length} bytes), 4 keep-alive connections: ` +
        `${(done / seconds).toFixed(0)} requests/s (${done} in ${seconds.toFixed(1)} s)`,
    );
  });
});

/** POST a review; rejects on a non-200 answer. */
function post(url: string, body: string, ca: string, agent?: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        ca,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode === 200) resolve(text);
          else reject(new Error(`POST ${url}: HTTP ${res.statusCode}: ${text.slice(0, 500)}`));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${url}: no answer in 10 s`)));
    req.on('error', reject);
    req.end(body);
  });
}
