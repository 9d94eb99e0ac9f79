// The daemons' Kubernetes client against a scripted HTTPS server on loopback: pagination, retries and their waits,
// which writes are retried, timeouts, size caps, TLS verification, token re-reading, impersonation, and the watch
// stream's framing. The same client against the real apiserver: test/e2e/kube-client.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient, type ClientOptions } from '../../../src/kube/api/client.ts';
import { readEvents, watch, type WatchEvent } from '../../../src/kube/api/watch.ts';
import { KubeApiError, KubeTransportError } from '../../../src/kube/errors.ts';
import { fakeServer, json, statusBody, type FakeServer } from './fake-server.ts';

let server: FakeServer;
let waits: number[];
beforeEach(async () => {
  server = await fakeServer();
  waits = [];
});
afterEach(() => server.close());

/** A client whose backoff waits are recorded instead of slept. */
function client(o: ClientOptions = {}, access = server.access): KubeClient {
  return new KubeClient(access, {
    sleep: async (ms) => void waits.push(ms),
    random: () => 0.5,
    ...o,
  });
}

describe('requests', () => {
  it('GET with query, bearer token and JSON answer', async () => {
    server.handle((_s, res) => json(res, 200, { kind: 'Node', metadata: { name: 'n1' } }));
    const node = await client().get<{ metadata: { name: string } }>('/api/v1/nodes/n1', { query: { a: 'b c' } });
    expect(node.metadata.name).toBe('n1');
    expect(server.seen[0]).toMatchObject({ method: 'GET' });
    expect(server.seen[0].url.pathname).toBe('/api/v1/nodes/n1');
    expect(server.seen[0].url.searchParams.get('a')).toBe('b c');
    expect(server.seen[0].headers.authorization).toBe('Bearer t0');
  });

  it.each([
    ['merge', 'application/merge-patch+json'],
    ['strategic', 'application/strategic-merge-patch+json'],
    ['json', 'application/json-patch+json'],
  ] as const)('PATCH %s sends %s', async (type, contentType) => {
    server.handle((_s, res) => json(res, 200, {}));
    await client().patch('/api/v1/nodes/n1', type, { a: 1 }, { query: { fieldManager: 'fm' } });
    expect(server.seen[0].headers['content-type']).toBe(contentType);
    expect(JSON.parse(server.seen[0].body)).toEqual({ a: 1 });
    expect(server.seen[0].url.searchParams.get('fieldManager')).toBe('fm');
  });

  it('an error status becomes a KubeApiError with the Status reason and message, not retried', async () => {
    server.handle((_s, res) => json(res, 409, statusBody(409, 'Conflict', 'the object has been modified')));
    const err = await client()
      .update('/api/v1/secrets/x', {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ code: 409, reason: 'Conflict', message: 'the object has been modified' });
    expect(server.seen).toHaveLength(1);
  });

  it('pages through a list by its continue token', async () => {
    server.handle((s, res) => {
      const cont = s.url.searchParams.get('continue');
      const page = cont ? Number(cont) : 0;
      json(res, 200, { items: [page * 2, page * 2 + 1], metadata: { continue: page < 2 ? String(page + 1) : '' } });
    });
    const items: unknown[] = [];
    for await (const p of client().pages<number>('/api/v1/pods', 2, { labelSelector: 'l' })) items.push(...p.items);
    expect(items).toEqual([0, 1, 2, 3, 4, 5]);
    expect(server.seen.map((s) => [s.url.searchParams.get('limit'), s.url.searchParams.get('continue')])).toEqual([
      ['2', null],
      ['2', '1'],
      ['2', '2'],
    ]);
    expect(server.seen.every((s) => s.url.searchParams.get('labelSelector') === 'l')).toBe(true);
  });
});

describe('listItems: a list an item at a time', () => {
  const paged = (s: { url: URL }, res: import('node:http').ServerResponse) => {
    const cont = s.url.searchParams.get('continue');
    const page = cont ? Number(cont) : 0;
    json(res, 200, {
      kind: 'List',
      metadata: { resourceVersion: String(10 + page), continue: page < 2 ? String(page + 1) : '' },
      items: [{ i: page * 2 }, { i: page * 2 + 1 }],
    });
  };

  it('hands over every item of every page, and the last resourceVersion', async () => {
    server.handle(paged);
    const items: unknown[] = [];
    const { resourceVersion } = await client().listItems('/api/v1/pods', 2, { labelSelector: 'l' }, (i) =>
      items.push(i),
    );
    expect(items).toEqual([0, 1, 2, 3, 4, 5].map((i) => ({ i })));
    expect(resourceVersion).toBe('12');
    expect(server.seen.map((s) => s.url.searchParams.get('continue'))).toEqual([null, '1', '2']);
  });

  it('retries a page that failed before its first item, and not one that failed after', async () => {
    let n = 0;
    server.handle((s, res) =>
      n++ === 0 ? json(res, 503, statusBody(503, 'ServiceUnavailable', 'busy')) : paged(s, res),
    );
    const items: unknown[] = [];
    await client().listItems('/api/v1/pods', 2, {}, (i) => items.push(i));
    expect(items).toHaveLength(6);
    expect(waits).toHaveLength(1);
    // Cut after the first item: that item was handed over, so the list fails rather than hand it over twice.
    server.handle((_s, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"List","metadata":{},"items":[{"i":0},');
      setTimeout(() => res.destroy(), 20);
    });
    const seen: unknown[] = [];
    const before = server.seen.length;
    await expect(client().listItems('/api/v1/pods', 2, {}, (i) => seen.push(i))).rejects.toThrow();
    expect(seen).toEqual([{ i: 0 }]);
    expect(server.seen.length - before).toBe(1);
  });
});

describe('retries', () => {
  it('429: waits its Retry-After, then succeeds', async () => {
    let n = 0;
    server.handle((_s, res) =>
      n++ < 2
        ? json(res, 429, statusBody(429, 'TooManyRequests', 'slow down'), { 'retry-after': '3' })
        : json(res, 200, {}),
    );
    await client().create('/api/v1/namespaces/d/events', {});
    expect(server.seen).toHaveLength(3);
    expect(waits).toEqual([3000, 3000]);
  });

  it('429 declared an answer (an eviction): no retry', async () => {
    server.handle((_s, res) => json(res, 429, statusBody(429, 'TooManyRequests', 'disruption budget')));
    await expect(client().create('/x', {}, { answers: [429] })).rejects.toMatchObject({ code: 429 });
    expect(server.seen).toHaveLength(1);
  });

  it('500 on a read: backoff and retry, up to the attempt limit', async () => {
    server.handle((_s, res) => json(res, 500, statusBody(500, 'InternalError', 'etcd')));
    await expect(client({ maxAttempts: 3 }).get('/x')).rejects.toMatchObject({ code: 500 });
    expect(server.seen).toHaveLength(3);
    expect(waits).toEqual([150, 300]);
  });

  it('per call: fewer attempts and a shorter timeout (a GET an admission review waits on)', async () => {
    server.handle((_s, res) => json(res, 500, statusBody(500, 'InternalError', 'etcd')));
    await expect(client().get('/x', { attempts: 1 })).rejects.toMatchObject({ code: 500 });
    expect(server.seen).toHaveLength(1);
    server.handle(() => undefined);
    await expect(client().get('/slow', { attempts: 1, timeoutMs: 100 })).rejects.toThrow(/no answer within 100 ms/);
    expect(server.seen).toHaveLength(2);
  });

  it('500 on a write: not retried (it may have been applied)', async () => {
    server.handle((_s, res) => json(res, 500, statusBody(500, 'InternalError', 'etcd')));
    await expect(client().patch('/x', 'merge', {})).rejects.toMatchObject({ code: 500 });
    expect(server.seen).toHaveLength(1);
  });

  it('a connection reset on a read is retried; on a sent write it is not', async () => {
    let n = 0;
    server.handle((s, res, req) =>
      s.method === 'GET' && n++ === 0 ? req.socket.destroy() : json(res, 200, { ok: 1 }),
    );
    expect(await client().get('/x')).toEqual({ ok: 1 });
    expect(server.seen).toHaveLength(2);
    server.handle((_s, _res, req) => req.socket.destroy());
    const err = await client()
      .create('/x', {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeTransportError);
    expect((err as KubeTransportError).sent).toBe(true);
    expect(server.seen).toHaveLength(3);
  });

  it('a refused connection is retried even for a write (nothing was sent), then fails naming the call', async () => {
    const port = Number(new URL(server.access.server).port);
    await server.close();
    const err = await client({ maxAttempts: 2 }, { ...server.access, server: `https://127.0.0.1:${port}` })
      .delete('/api/v1/namespaces/a/pods/p')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeTransportError);
    expect((err as Error).message).toMatch(/DELETE \/api\/v1\/namespaces\/a\/pods\/p: .*ECONNREFUSED/);
    expect((err as KubeTransportError).sent).toBe(false);
    expect(waits).toHaveLength(1);
    server = await fakeServer();
  });
});

describe('bounds', () => {
  it('an attempt with no answer in time fails (and a read is tried again)', async () => {
    server.handle(() => undefined);
    const err = await client({ requestTimeoutMs: 200, maxAttempts: 2 })
      .get('/slow')
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/GET \/slow: no answer within 200 ms/);
    expect(server.seen).toHaveLength(2);
  });

  it('an answer over maxBytes is cut and fails, not retried', async () => {
    server.handle((_s, res) => json(res, 200, { items: 'x'.repeat(100_000) }));
    await expect(client().get('/big', { maxBytes: 10_000 })).rejects.toThrow(
      /GET \/big: the answer exceeds 10000 bytes/,
    );
    expect(server.seen).toHaveLength(1);
  });

  it('a server whose certificate the CA did not sign is refused, not retried', async () => {
    const { CertificateAuthority } = await import('../../e2e/harness/pki.ts');
    const stranger = new CertificateAuthority('stranger');
    await expect(client({}, { ...server.access, ca: stranger.certPem }).get('/x')).rejects.toBeInstanceOf(
      KubeTransportError,
    );
    expect(server.seen).toHaveLength(0);
    expect(waits).toHaveLength(0);
  });
});

describe('credentials', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'meshgate-token-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('re-reads a rotated token file after a 401 and retries once', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'old\n');
    server.handle((s, res) =>
      s.headers.authorization === 'Bearer new'
        ? json(res, 200, { ok: true })
        : json(res, 401, statusBody(401, 'Unauthorized', 'Unauthorized')),
    );
    const c = client({}, { ...server.access, token: undefined, tokenFile });
    await expect(c.get('/x')).rejects.toMatchObject({ code: 401 });
    expect(server.seen.map((s) => s.headers.authorization)).toEqual(['Bearer old', 'Bearer old']);
    writeFileSync(tokenFile, 'new\n');
    expect(await c.get('/x')).toEqual({ ok: true });
    expect(server.seen.map((s) => s.headers.authorization).slice(2)).toEqual(['Bearer old', 'Bearer new']);
  });

  it('impersonation headers: one Impersonate-Group per group, extras with their key escaped', async () => {
    server.handle((_s, res) => json(res, 200, {}));
    const impersonate = { user: 'system:node:n1', groups: ['system:nodes', 'g2'], extra: { 'a/b': ['v'] } };
    await client({}, { ...server.access, impersonate }).get('/x');
    const h = server.seen[0].headers;
    expect(h['impersonate-user']).toBe('system:node:n1');
    expect(h['impersonate-group']).toBe('system:nodes, g2');
    expect(h['impersonate-extra-a%2fb']).toBe('v');
  });
});

describe('watch', () => {
  it('hands over events, including ones split across chunks, and resolves when the server ends it', async () => {
    server.handle((_s, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const a = `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '8' } } })}\n`;
      res.write(a.slice(0, 10));
      setTimeout(() => {
        res.write(a.slice(10));
        res.end(`${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } })}\n`);
      }, 20);
    });
    const events: WatchEvent<{ metadata: { resourceVersion: string } }>[] = [];
    await watch<{ metadata: { resourceVersion: string } }>(client(), '/api/v1/nodes', (e) => void events.push(e), {
      query: { resourceVersion: '7' },
      timeoutSeconds: 30,
    });
    expect(events.map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([
      ['ADDED', '8'],
      ['BOOKMARK', '9'],
    ]);
    expect(Object.fromEntries(server.seen[0].url.searchParams)).toMatchObject({
      watch: 'true',
      allowWatchBookmarks: 'true',
      resourceVersion: '7',
      timeoutSeconds: '30',
    });
  });

  it('a 410 answer to the watch request is a KubeApiError the reflector relists on', async () => {
    server.handle((_s, res) => json(res, 410, statusBody(410, 'Expired', 'too old resource version')));
    await expect(watch(client(), '/api/v1/nodes', () => undefined)).rejects.toMatchObject({ code: 410 });
  });

  it('readEvents: a line over its bound fails; a line that is not an event fails', async () => {
    const big = new PassThrough();
    const done = readEvents(big, () => undefined, 100, 'watch /x');
    big.write('{"type":"ADDED","object":{"a":"');
    big.write('x'.repeat(200));
    await expect(done).rejects.toThrow(/watch \/x: an event exceeds 100 characters/);
    const odd = new PassThrough();
    const bad = readEvents(odd, () => undefined, 1000, 'watch /y');
    odd.end('{"kind":"Status"}\n');
    await expect(bad).rejects.toThrow(/watch \/y: not a watch event/);
  });
});
