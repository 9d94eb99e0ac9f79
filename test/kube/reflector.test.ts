// The reflector (src/kube/reflector.ts) against a scripted HTTPS server: paged lists replaced whole, a watch that
// ends at once with nothing delivered backs off instead of spinning, an ERROR event 410 relists, another ERROR is
// reported. Against the real apiserver (resumption, a real 410, resets): test/e2e/kube-client.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/api/client.ts';
import { Reflector } from '../../src/kube/reflector.ts';
import { fakeServer, json, type FakeServer } from './api/fake-server.ts';

let server: FakeServer;
let r: Reflector | undefined;
beforeEach(async () => {
  server = await fakeServer();
});
afterEach(async () => {
  r?.stop();
  await server.close();
});

type Obj = { metadata: { name: string; resourceVersion: string } };
const obj = (name: string, rv: string): Obj => ({ metadata: { name, resourceVersion: rv } });
const line = (type: string, object: object) => `${JSON.stringify({ type, object })}\n`;
const until = async (what: string, ok: () => boolean) => {
  for (const deadline = Date.now() + 10_000; !ok(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 10));
  }
};

function reflector(o: { onError?: (e: unknown) => void } = {}) {
  const items: string[][] = [];
  const upserts: string[] = [];
  r = new Reflector({
    client: new KubeClient(server.access),
    path: '/api/v1/nodes',
    labelSelector: 'a=b',
    replace: (all) => void items.push((all as Obj[]).map((x) => x.metadata.name)),
    upsert: (x) => void upserts.push((x as Obj).metadata.name),
    remove: () => undefined,
    onError: o.onError,
  });
  return { r, items, upserts };
}

describe('reflector', () => {
  it('lists every page into one replace, then watches from the list resourceVersion with the selector', async () => {
    server.handle((s, res) => {
      if (s.url.searchParams.get('watch')) {
        res.writeHead(200);
        res.write(line('ADDED', obj('n3', '12')));
        return; // left open
      }
      const cont = s.url.searchParams.get('continue');
      json(res, 200, {
        items: cont ? [obj('n2', '9')] : [obj('n1', '8')],
        metadata: { resourceVersion: '10', continue: cont ? '' : 'next' },
      });
    });
    const { r: ref, items, upserts } = reflector();
    await ref.start();
    expect(items).toEqual([['n1', 'n2']]);
    await until('the watch event', () => upserts.length === 1);
    expect(upserts).toEqual(['n3']);
    const w = server.seen.find((s) => s.url.searchParams.get('watch'))!;
    expect(w.url.searchParams.get('resourceVersion')).toBe('10');
    expect(w.url.searchParams.get('labelSelector')).toBe('a=b');
    expect(w.url.searchParams.get('allowWatchBookmarks')).toBe('true');
  });

  it('a watch that ends at once with nothing delivered is an error, retried after a backoff, not at once', async () => {
    server.handle((s, res) =>
      s.url.searchParams.get('watch') ? res.writeHead(200).end() : json(res, 200, { items: [], metadata: {} }),
    );
    const errors: string[] = [];
    const { r: ref } = reflector({ onError: (e) => void errors.push((e as Error).message) });
    await ref.start();
    await until('the first short watch', () => errors.length === 1);
    await new Promise((res) => setTimeout(res, 500));
    expect(errors[0]).toMatch(/ended at once without an event/);
    // A spinning loop would have made hundreds of requests in that half second; the backoff allows one.
    expect(ref.stats.watches).toBe(1);
  });

  it('an ERROR event with 410 relists; another ERROR is reported', async () => {
    let watches = 0;
    server.handle((s, res) => {
      if (!s.url.searchParams.get('watch'))
        return json(res, 200, { items: [obj('n1', '5')], metadata: { resourceVersion: '5' } });
      watches++;
      const code = watches === 1 ? 410 : 500;
      res.writeHead(200).end(line('ERROR', { kind: 'Status', code, message: `code ${code}` }));
    });
    const errors: string[] = [];
    const { r: ref, items } = reflector({ onError: (e) => void errors.push((e as Error).message) });
    await ref.start();
    await until('a relist and a reported error', () => items.length === 2 && errors.length === 1);
    expect(errors[0]).toMatch(/watch \/api\/v1\/nodes: 500 code 500/);
    expect(ref.stats.lists).toBe(2);
  });
});
