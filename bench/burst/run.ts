/**
 * What the apiserver sees: bursts of pod creates through a real kube-apiserver (test/e2e harness, one kwok node
 * whose node agent verdict is published as verified, no scheduler so nothing but the creates loads it), once per
 * webhook setup, in fresh namespaces labelled for that setup:
 *   none            no webhook (the baseline), run first and again last (how much the apiserver drifted)
 *   echo            meshgate's process registered the same way, answering a canned patch of meshgate's size and
 *                   allowed (what being a webhook costs the apiserver: encoding the pod, TLS, applying the patch)
 *   meshgate        meshgate mutate + validate (mesh custom: it injects its own proxy)
 *   istio           Istio 1.27's injector, registered with its chart's configuration
 *   istio+meshgate  Istio's injector, then meshgate in companion mode (mesh istio, named so it runs after Istio)
 * Each setup gets a warm-up (connections, caches) in a namespace left out of the figures, then `pods` creates
 * spread over `namespaces` namespaces, `concurrency` in flight. Figures: the client's latency per create, the
 * apiserver's own span of each create (audit log) and its webhook histogram (apiserver-metrics.ts).
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { podPoster, type PodPoster } from './client.ts';
import type { ControlPlane } from '../../test/e2e/harness/index.ts';
import { startIstioInjector, waitFor, type IstioInjector } from '../../test/e2e/harness/index.ts';
import { publishVerdict } from '../../test/e2e/meshgate.ts';
import { percentile, round } from '../stats.ts';
import { sampleProc } from '../peers/proc-stats.ts';
import { auditedCreates, webhookDelta, webhookHistograms, type WebhookFigures } from './apiserver-metrics.ts';
import { ISTIO_LABEL, MESHGATE_LABEL, startMeshgate, type RunningMeshgate } from './webhooks.ts';

export type SetupName = 'none' | 'echo' | 'meshgate' | 'istio' | 'istio+meshgate';

export interface BurstOptions {
  pods: number;
  namespaces: number;
  concurrency: number;
  warmupPods: number;
  serialPods: number;
  node: string;
}

export interface Phase {
  created: number;
  failed: number;
  firstFailure?: string;
  seconds: number;
  client: { p50Ms: number; p99Ms: number; maxMs: number };
  apiserver: { p50Ms: number; p99Ms: number; maxMs: number; audited: number };
  /** CPU (user + system, every thread, /proc) each process spent during the phase, per pod created, ms. */
  cpuMsPerCreate: Record<string, number>;
}

export interface SetupResult {
  setup: SetupName;
  run: number;
  /** `pods` creates, `concurrency` in flight. */
  burst: Phase;
  /** `serialPods` creates one after the other: what one create waits without queueing. */
  serial: Phase;
  /** The apiserver's webhook histogram over the burst. */
  webhooks: Record<string, WebhookFigures>;
}

const stats = (ms: number[]) => {
  const s = Float64Array.from(ms).sort();
  return {
    p50Ms: round(percentile(s, 0.5), 3),
    p99Ms: round(percentile(s, 0.99), 3),
    maxMs: round(s.length ? s[s.length - 1] : NaN, 2),
  };
};

async function namespaces(cp: ControlPlane, names: string[], labels: Record<string, string>): Promise<void> {
  const core = cp.kc.makeApiClient(CoreV1Api);
  for (const name of names) {
    await core.createNamespace({ body: { metadata: { name, labels } } });
    // No controller-manager runs: the ServiceAccount admission plugin needs `default` to exist.
    await core.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: 'default' } } });
  }
}

/** Creates `count` pods over `nss`, `concurrency` at a time; returns each create's client-side latency. */
async function createPods(
  poster: PodPoster,
  nss: string[],
  pods: V1Pod[],
  count: number,
  concurrency: number,
  tag: string,
): Promise<{ ms: number[]; failed: number; firstFailure?: string }> {
  const ms: number[] = [];
  let failed = 0;
  let firstFailure: string | undefined;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const ns = nss[i % nss.length];
      const pod = pods[i % pods.length];
      const body = { ...pod, metadata: { ...pod.metadata, name: `${tag}-${i}`, namespace: ns } };
      const t0 = performance.now();
      const r = await poster.create(ns, body);
      if (r.status === 201) ms.push(performance.now() - t0);
      else {
        failed++;
        firstFailure ??= `HTTP ${r.status}: ${r.message}`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ms, failed, firstFailure };
}

/** The audit spans of the successful creates in namespaces starting with `prefix`, once all `count` are logged. */
async function audited(auditLog: string, prefix: string, count: number): Promise<number[]> {
  // The audit backend flushes its batch at least every second (--audit-log-batch-max-wait).
  const mine = await waitFor(
    `${count} audit events in ${prefix}*`,
    () => {
      const m = auditedCreates(auditLog).filter((e) => e.namespace.startsWith(prefix));
      return m.length >= count ? m : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  return mine.filter((e) => e.code === 201).map((e) => e.ms);
}

async function phase(
  poster: PodPoster,
  auditLog: string,
  nss: string[],
  prefix: string,
  pods: V1Pod[],
  count: number,
  concurrency: number,
  /** The processes whose CPU the phase reports, by name: the apiserver, etcd, the webhooks. */
  procs: Record<string, number>,
): Promise<Phase> {
  const cpu = () => Object.fromEntries(Object.entries(procs).map(([name, pid]) => [name, sampleProc(pid).cpuS]));
  const c0 = cpu();
  const t0 = performance.now();
  const r = await createPods(poster, nss, pods, count, concurrency, prefix);
  const seconds = round((performance.now() - t0) / 1000, 1);
  const c1 = cpu();
  const spans = await audited(auditLog, prefix, count);
  const perCreate = (name: string) => round(((c1[name] - c0[name]) * 1000) / Math.max(1, r.ms.length), 3);
  return {
    created: r.ms.length,
    failed: r.failed,
    firstFailure: r.firstFailure,
    seconds,
    client: stats(r.ms),
    apiserver: { ...stats(spans), audited: spans.length },
    cpuMsPerCreate: Object.fromEntries(Object.keys(procs).map((name) => [name, perCreate(name)])),
  };
}

export async function runSetup(
  cp: ControlPlane,
  auditLog: string,
  setup: SetupName,
  run: number,
  pods: V1Pod[],
  o: BurstOptions,
  log: (s: string) => void,
): Promise<SetupResult> {
  const key = `${setup.replace('+', '-')}-${run}`;
  const labels = {
    ...(setup.includes('meshgate') || setup === 'echo' ? MESHGATE_LABEL : {}),
    ...(setup.startsWith('istio') ? ISTIO_LABEL : {}),
  };
  let istio: IstioInjector | undefined;
  let meshgate: RunningMeshgate | undefined;
  const poster = await podPoster(cp.kc, o.concurrency);
  try {
    if (setup.startsWith('istio')) {
      istio = await startIstioInjector(cp, { logLevel: 'warn' });
      await istio.register();
    }
    if (setup === 'meshgate') meshgate = await startMeshgate(cp, 'custom', 'meshgate');
    if (setup === 'echo') meshgate = await startMeshgate(cp, 'custom', 'echo', true);
    if (setup === 'istio+meshgate') meshgate = await startMeshgate(cp, 'istio', 'z-meshgate'); // after istio-sidecar-injector
    const warm = `w-${key}`;
    const serialNs = `s-${key}`;
    const nss = Array.from({ length: o.namespaces }, (_, i) => `b-${key}-${i}`);
    await namespaces(cp, [warm, serialNs, ...nss], labels);
    const w = await createPods(poster, [warm], pods, o.warmupPods, o.concurrency, warm);
    if (w.failed === o.warmupPods) throw new Error(`${setup}: every warm-up create failed: ${w.firstFailure}`);
    const pids = cp.pids();
    const procs: Record<string, number> = {};
    if (pids['kube-apiserver']) procs.apiserver = pids['kube-apiserver'];
    if (pids.etcd) procs.etcd = pids.etcd;
    if (istio) procs.istio = istio.pid;
    if (meshgate) procs.meshgate = meshgate.child.pid;
    const before = await webhookHistograms(cp);
    const burst = await phase(poster, auditLog, nss, `b-${key}-`, pods, o.pods, o.concurrency, procs);
    const after = await webhookHistograms(cp);
    const serial = await phase(poster, auditLog, [serialNs], serialNs, pods, o.serialPods, 1, procs);
    const webhooks: Record<string, WebhookFigures> = {};
    for (const [name, h] of after) {
      const d = webhookDelta(before.get(name), h);
      if (d.calls > 0)
        webhooks[name] = {
          ...d,
          meanMs: round(d.meanMs, 3),
          within5msPct: round(d.within5msPct, 1),
          p99Ms: round(d.p99Ms, 2),
        };
    }
    const cpuText = (p: Phase) =>
      Object.entries(p.cpuMsPerCreate)
        .map(([name, ms]) => `${name} ${ms}`)
        .join(', ');
    const line = (what: string, p: Phase) =>
      `${what} ${p.created} created, ${p.failed} failed in ${p.seconds} s; client p50 ${p.client.p50Ms} p99 ${p.client.p99Ms} ms; apiserver p50 ${p.apiserver.p50Ms} p99 ${p.apiserver.p99Ms} ms; CPU ms per create: ${cpuText(p)}`;
    log(
      `${setup.padEnd(15)} ${line('burst:', burst)} | ${line('serial:', serial)}${burst.firstFailure ? ` | first failure: ${burst.firstFailure.slice(0, 160)}` : ''}`,
    );
    return { setup, run, burst, serial, webhooks };
  } finally {
    poster.close();
    await meshgate?.unregister();
    await istio?.stop();
  }
}

/** The node every setup sees: verified by the (published) node agent verdict, kubelet ≥ 1.33. */
export async function prepareCluster(cp: ControlPlane, node: string): Promise<void> {
  await publishVerdict(cp, node, true);
}
