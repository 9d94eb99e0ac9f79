/**
 * The daemons' own Kubernetes client (src/kube/api) and reflector against a real kube-apiserver (test/e2e/harness):
 * every verb the daemons use, paging, a watch the apiserver itself ends (timeoutSeconds) resumed without a relist
 * and without losing events, the apiserver's real 410 Gone for a too-old resourceVersion answered by a relist,
 * retries through a loopback proxy that injects 429s, 500s and resets in front of it (test/e2e/fault-proxy.ts), and
 * a service-account token file re-read after a 401.
 * Run: npx vitest run test/e2e/kube-client.test.ts (needs the control plane built by scripts/build-controlplane.sh).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/api/client.ts';
import { core, group } from '../../src/kube/api/paths.ts';
import { KubeApiError } from '../../src/kube/errors.ts';
import { Reflector } from '../../src/kube/reflector.ts';
import { watch } from '../../src/kube/api/watch.ts';
import { daemonClient } from './daemon-client.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';

const NS = 'client-e2e';
type ConfigMap = { metadata: { name: string; resourceVersion: string }; data?: Record<string, string> };

let cp: ControlPlane;
let kube: KubeClient;
let proxy: FaultProxy;
const dir = mkdtempSync(join(tmpdir(), 'meshgate-client-e2e-'));

beforeAll(async () => {
  cp = await startControlPlane({
    withScheduler: false,
    withControllerManager: false,
    withKwok: false,
    // PodTemplates without a watch cache, and etcd compacted every 5 s: a watch from an old resourceVersion of them
    // reaches etcd, which has compacted it away, and the apiserver answers 410 Gone (the watch cache of a fresh
    // apiserver still holds every event since its start, so a cached resource would not).
    apiserverArgs: ['--watch-cache-sizes=podtemplates#0', '--etcd-compaction-interval=5s'],
  });
  kube = daemonClient(cp.kc);
  await kube.create(core('namespaces'), { metadata: { name: NS } });
  proxy = await startFaultProxy(cp);
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  kube?.close();
  await cp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const cms = core('configmaps', { namespace: NS });
const cm = (name: string) => core('configmaps', { namespace: NS, name });
const create = (name: string, data: Record<string, string> = {}) =>
  kube.create<ConfigMap>(cms, { metadata: { name }, data });

/** A client that reaches the apiserver through the fault proxy (which forwards as the admin). */
const viaProxy = () =>
  new KubeClient(
    { server: proxy.server, ca: proxy.ca, source: 'fault proxy' },
    { sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 1_500))) },
  );

describe('verbs and paging', () => {
  it('create, get, update with a stale resourceVersion (409), patch three ways, page, delete, 404', async () => {
    const made = await create('verbs', { a: '1' });
    expect((await kube.get<ConfigMap>(cm('verbs'))).data).toEqual({ a: '1' });
    const updated = await kube.update<ConfigMap>(cm('verbs'), { ...made, data: { a: '2' } });
    const stale = await kube.update(cm('verbs'), { ...made, data: { a: '3' } }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(KubeApiError);
    expect((stale as KubeApiError).code).toBe(409);
    await kube.patch(cm('verbs'), 'merge', { data: { b: 'merge' } });
    await kube.patch(cm('verbs'), 'strategic', { data: { c: 'strategic' } });
    await kube.patch(cm('verbs'), 'json', [{ op: 'add', path: '/data/d', value: 'json' }]);
    const after = await kube.get<ConfigMap>(cm('verbs'));
    expect(after.data).toEqual({ a: '2', b: 'merge', c: 'strategic', d: 'json' });
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(updated.metadata.resourceVersion));

    for (let i = 0; i < 7; i++) await create(`page-${i}`);
    const pages: number[] = [];
    for await (const p of kube.pages<ConfigMap>(cms, 3, { labelSelector: undefined }))
      pages.push(p.items.filter((c) => c.metadata.name.startsWith('page-')).length);
    expect(pages.reduce((a, b) => a + b, 0)).toBe(7);
    expect(pages.length).toBeGreaterThanOrEqual(3);

    await kube.delete(cm('verbs'));
    await expect(kube.get(cm('verbs'))).rejects.toMatchObject({ code: 404, reason: 'NotFound' });
  });
});

describe('watch', () => {
  it('a watch the apiserver ends (timeoutSeconds) is resumed from the last resourceVersion: no relist, no loss', async () => {
    const seen = new Set<string>();
    const r = new Reflector({
      client: kube,
      path: cms,
      labelSelector: 'resume=yes',
      watchTimeoutSeconds: 1,
      list: () => ({ add: () => undefined, done: () => undefined }),
      upsert: (o) => void seen.add((o as ConfigMap).metadata.name),
      remove: () => undefined,
    });
    await r.start();
    try {
      const names = Array.from({ length: 8 }, (_, i) => `resume-${i}`);
      for (const name of names) {
        await kube.create(cms, { metadata: { name, labels: { resume: 'yes' } } });
        await new Promise((res) => setTimeout(res, 500));
      }
      await waitFor('every created ConfigMap seen by the watch', () => names.every((n) => seen.has(n)), {
        timeoutMs: 15_000,
      });
      expect(r.stats.lists).toBe(1);
      expect(r.stats.watches).toBeGreaterThanOrEqual(3);
      console.log(`resumed watch: ${r.stats.watches} watch requests for ${names.length} creates over ~4 s, 1 list`);
    } finally {
      r.stop();
    }
  });

  it("the apiserver's 410 Gone for a too-old resourceVersion makes the reflector list again", async () => {
    const templates = core('podtemplates', { namespace: NS });
    let answer = '';
    await waitFor(
      'etcd compacted past resourceVersion 1 (a watch from it answers 410)',
      async () => {
        const note = (e: { type: string; object: { code?: number } }) => {
          answer = `${e.type} ${e.object.code}`;
        };
        await watch<{ code?: number }>(kube, templates, note, {
          query: { resourceVersion: '1' },
          timeoutSeconds: 1,
        });
        return answer === 'ERROR 410';
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    const client = viaProxy();
    // The reflector's first list answers with resourceVersion 1 (rewritten on its way back): its watch from there
    // gets the real apiserver's 410.
    proxy.inject((m, u) => m === 'GET' && u.pathname === templates && !u.searchParams.has('watch'), {
      kind: 'rewrite',
      edit: (b) => {
        (b.metadata as Record<string, unknown>).resourceVersion = '1';
      },
    });
    const seen = new Set<string>();
    const r = new Reflector({
      client,
      path: templates,
      // A paged list, whose answer the proxy rewrites (a watch-list's initial state comes in a watch).
      initial: 'pages',
      list: () => ({ add: () => undefined, done: () => undefined }),
      upsert: (o) => void seen.add((o as ConfigMap).metadata.name),
      remove: () => undefined,
    });
    await r.start();
    try {
      await waitFor('a relist after 410', () => r.stats.lists === 2, { timeoutMs: 15_000 });
      const template = {
        metadata: { name: 'after-gone' },
        template: { spec: { containers: [{ name: 'c', image: 'i' }] } },
      };
      await kube.create(templates, template);
      await waitFor('the watch after the relist delivers', () => seen.has('after-gone'), { timeoutMs: 15_000 });
      const watches = proxy.seen.filter((s) => s.startsWith(`GET ${templates}?`) && s.includes('watch=true'));
      expect(watches[0]).toMatch(/resourceVersion=1&/);
      expect(watches.at(-1)).not.toMatch(/resourceVersion=1&/);
    } finally {
      r.stop();
      client.close();
    }
  });
});

describe('retries through a faulty proxy', () => {
  it('429 with Retry-After twice, then the real answer', async () => {
    await create('retry-429');
    const path = cm('retry-429');
    proxy.inject((m, u) => m === 'PATCH' && u.pathname === path, { kind: '429', retryAfter: '1' });
    proxy.inject((m, u) => m === 'PATCH' && u.pathname === path, { kind: '429', retryAfter: '1' });
    const client = viaProxy();
    const t0 = performance.now();
    await client.patch(path, 'merge', { data: { through: '429' } });
    console.log(`PATCH through two 429s (Retry-After: 1): ${Math.round(performance.now() - t0)} ms`);
    expect(proxy.pending()).toBe(0);
    expect((await kube.get<ConfigMap>(path)).data).toEqual({ through: '429' });
    client.close();
  });

  it('500 and a reset on reads are retried; a page of a list among them', async () => {
    proxy.inject((m, u) => m === 'GET' && u.searchParams.has('continue'), { kind: 'reset' });
    proxy.inject((m, u) => m === 'GET' && u.searchParams.has('continue'), { kind: '500' });
    const client = viaProxy();
    let n = 0;
    for await (const p of client.pages<ConfigMap>(cms, 2)) n += p.items.length;
    expect(proxy.pending()).toBe(0);
    const all = await kube.get<{ items: unknown[] }>(cms);
    expect(n).toBe(all.items.length);
    client.close();
  });

  it('a 500 on a write is not retried: it fails, and only the caller decides', async () => {
    await create('no-retry', { v: 'before' });
    const path = cm('no-retry');
    proxy.inject((m, u) => m === 'PATCH' && u.pathname === path, { kind: '500' });
    const client = viaProxy();
    const before = proxy.seen.length;
    await expect(client.patch(path, 'merge', { data: { v: 'after' } })).rejects.toMatchObject({ code: 500 });
    expect(proxy.seen.length - before).toBe(1);
    expect((await kube.get<ConfigMap>(path)).data).toEqual({ v: 'before' });
    client.close();
  });

  it('a watch cut by a reset is resumed by the reflector', async () => {
    const client = viaProxy();
    const seen = new Set<string>();
    const errors: unknown[] = [];
    const r = new Reflector({
      client,
      path: cms,
      labelSelector: 'cut=yes',
      // Paged, so the watch is a request of its own to cut (a watch-list's initial stream simply goes on: a reset
      // there is retried as a failed first list, before start() resolves).
      initial: 'pages',
      list: () => ({ add: () => undefined, done: () => undefined }),
      upsert: (o) => void seen.add((o as ConfigMap).metadata.name),
      remove: () => undefined,
      onError: (e) => void errors.push(e),
    });
    proxy.inject((m, u) => m === 'GET' && u.pathname === cms && u.searchParams.has('watch'), { kind: 'reset' });
    await r.start();
    try {
      await kube.create(cms, { metadata: { name: 'after-cut', labels: { cut: 'yes' } } });
      await waitFor('the resumed watch delivers', () => seen.has('after-cut'), { timeoutMs: 15_000 });
      expect(errors.length).toBeGreaterThanOrEqual(1);
      expect(r.stats.lists).toBe(1);
    } finally {
      r.stop();
      client.close();
    }
  });
});

describe('service-account token file', () => {
  it('is re-read after a 401: a rotated token is used without a restart', async () => {
    const admin = cp.kc.makeApiClient(CoreV1Api);
    await admin.createNamespacedServiceAccount({ namespace: NS, body: { metadata: { name: 'agent' } } });
    const token = (
      await admin.createNamespacedServiceAccountToken({
        namespace: NS,
        name: 'agent',
        body: { spec: { expirationSeconds: 600 } },
      })
    ).status!.token;
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'not-a-token\n');
    const client = new KubeClient({ server: cp.server, ca: cp.ca.certPem, tokenFile, source: 'test' });
    const review = group('authentication.k8s.io/v1', 'selfsubjectreviews');
    const whoami = async () =>
      (await client.create<{ status: { userInfo: { username: string } } }>(review, {})).status.userInfo.username;
    await expect(whoami()).rejects.toMatchObject({ code: 401 });
    writeFileSync(tokenFile, `${token}\n`);
    expect(await whoami()).toBe(`system:serviceaccount:${NS}:agent`);
    client.close();
  });
});
