/**
 * The steady minute: each daemon's normal work, at the pace a cluster gives it, while every process's RSS is read
 * from /proc once a second.
 * - agent: a resync (heartbeat) every AGENT_RESYNC, its CNI conf file rewritten every 10 s (a verdict flip each
 *   time, so it publishes), its /healthz and /readyz probed every 10 s (the chart's kubelet probes), /metrics
 *   scraped every 15 s;
 * - webhook: 5 reviews a second over HTTPS keep-alive (corpus pods, /mutate and /validate in turn: 300 in the
 *   minute), probes and scrapes as above, its caches following the pod churn;
 * - repair controller: its pod, namespace and Lease traffic (a renewal every 2 s), probes and scrapes;
 * - the cluster: a pod created and one deleted every 5 s, which every pod watch sees.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../../test/e2e/harness/index.ts';
import { corpusWorkload } from '../corpus.ts';
import { churn } from './cluster.ts';
import { CNI_FILE, MESHED, PRIMARY, rssBytes, type Daemons } from './daemons.ts';

export type Role = 'agent' | 'webhook' | 'repair' | 'bare';

export interface Sampled {
  /** `${suffix}/${role}` → RSS samples in bytes, one a second. */
  rss: Record<string, number[]>;
  /** Reviews answered 200. */
  reviews: number;
  /** Reviews, probes, scrapes or churn calls that failed or were answered otherwise (probes: not 200). */
  failures: number;
  fileChanges: number;
}

interface Get {
  status: number;
  body: string;
}

function get(url: string, ca?: string, agent?: Agent): Promise<Get> {
  return new Promise((resolve, reject) => {
    const done = (res: import('node:http').IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    };
    const req = url.startsWith('https:') ? httpsRequest(url, { ca, agent }, done) : httpRequest(url, done);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url}: no answer in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

function post(url: string, body: string, ca: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method: 'POST', ca, agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`POST ${url}: no answer in 10 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The webhook's CA, once it has created its Secret. */
async function webhookCa(kc: KubeConfig, secret: string): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  return waitFor(
    `Secret meshgate/${secret}`,
    async () => {
      const s = await core.readNamespacedSecret({ namespace: 'meshgate', name: secret }).catch(() => undefined);
      const ca = s?.data?.['ca.crt'];
      return ca ? Buffer.from(ca, 'base64').toString('utf8') : false;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** Waits until each daemon says ready; returns the webhook's CA. */
export async function waitReady(kc: KubeConfig, d: Daemons): Promise<string> {
  const ready = async (what: string, url: string, ca?: string) =>
    waitFor(
      `${d.suffix} ${what} ready (${url})`,
      async () => (await get(url, ca).catch(() => undefined))?.status === 200,
      {
        timeoutMs: 120_000,
        intervalMs: 500,
        describe: () => `see ${d.logFile}`,
      },
    );
  await ready('node agent', `http://127.0.0.1:${d.agent.port}/readyz`);
  await ready('repair controller', `http://127.0.0.1:${d.repair.port}/readyz`);
  const ca = await webhookCa(kc, d.webhook.secret);
  await ready('webhook', `https://127.0.0.1:${d.webhook.port}/readyz`, ca);
  return ca;
}

export async function steadyMinute(
  kc: KubeConfig,
  sets: Array<{ daemons: Daemons; ca: string }>,
  bare: number,
  seconds: number,
): Promise<Sampled> {
  const { work } = corpusWorkload();
  const bodies = {
    mutate: work.mutate.map((s) => JSON.stringify(s.review)),
    validate: work.validate.map((s) => JSON.stringify(s.review)),
  };
  const out: Sampled = { rss: {}, reviews: 0, failures: 0, fileChanges: 0 };
  const sample = (key: string, pid: number | undefined) => {
    out.rss[key] ??= [];
    out.rss[key].push(rssBytes(pid));
  };
  const agents = sets.map(() => new Agent({ keepAlive: true, maxSockets: 2 }));
  const pending: Promise<unknown>[] = [];
  const track = (p: Promise<unknown>) => pending.push(p.catch(() => out.failures++));
  const probe = (p: Promise<Get>) => track(p.then((r) => r.status !== 200 && out.failures++));
  let n = 0;
  for (let s = 1; s <= seconds; s++) {
    const tick = new Promise((r) => setTimeout(r, 1000));
    sets.forEach(({ daemons: d, ca }, i) => {
      const web = `https://127.0.0.1:${d.webhook.port}`;
      for (let k = 0; k < 5; k++, n++) {
        const route = n % 2 === 0 ? 'mutate' : 'validate';
        const list = bodies[route];
        const answered = post(`${web}/${route}`, list[n % list.length], ca, agents[i]);
        track(answered.then((status) => (status === 200 ? out.reviews++ : out.failures++)));
      }
      if (s % 10 === 0) {
        writeFileSync(join(d.agent.confDir, CNI_FILE), (s / 10) % 2 === 1 ? PRIMARY : MESHED);
        out.fileChanges++;
      }
      // Probes halfway between file changes: right after one, the agent is rightly not ready until it has published.
      if (s % 10 === 5) {
        for (const p of ['/healthz', '/readyz']) {
          probe(get(`http://127.0.0.1:${d.agent.port}${p}`));
          probe(get(`http://127.0.0.1:${d.repair.port}${p}`));
          probe(get(`${web}${p}`, ca, agents[i]));
        }
      }
      if (s % 15 === 0) {
        probe(get(`http://127.0.0.1:${d.agent.port}/metrics`));
        probe(get(`http://127.0.0.1:${d.repair.port}/metrics`));
        probe(get(`${web}/metrics`, ca, agents[i]));
      }
    });
    if (s % 5 === 0) track(churn(kc, s / 5 - 1));
    await tick;
    for (const { daemons: d } of sets) {
      sample(`${d.suffix}/agent`, d.agent.child.pid);
      sample(`${d.suffix}/webhook`, d.webhook.child.pid);
      sample(`${d.suffix}/repair`, d.repair.child.pid);
    }
    sample('bare', bare);
  }
  await Promise.all(pending);
  for (const a of agents) a.destroy();
  return out;
}
