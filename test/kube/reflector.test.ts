// The reflector (src/kube/reflector.ts) against a scripted HTTPS server: the initial state streamed by the
// watch-list protocol into one list that its bookmark ends, the same response going on as the watch; an apiserver
// that refuses watch-list listed page by page, each page handed over before the next is asked; a watch-list cut
// before its bookmark thrown away and read again; a watch that ends at once with nothing delivered backs off instead
// of spinning; an ERROR event 410 relists, another ERROR is reported. Against the real apiserver (resumption, a real
// 410, resets, watch-list as Kubernetes 1.34 serves it and with its feature off): test/e2e/kube-client.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/api/client.ts';
import { INITIAL_EVENTS_END, Reflector, type ReflectorOptions } from '../../src/kube/reflector.ts';
import { fakeServer, json, statusBody, type FakeServer } from './api/fake-server.ts';

let server: FakeServer;
let r: Reflector | undefined;
beforeEach(async () => {
  server = await fakeServer();
});
afterEach(async () => {
  r?.stop();
  await server.close();
});

type Obj = { metadata: { name: string; resourceVersion: string; annotations?: Record<string, string> } };
const obj = (name: string, rv: string): Obj => ({ metadata: { name, resourceVersion: rv } });
const line = (type: string, object: object) => `${JSON.stringify({ type, object })}\n`;
const endOfInitial = (rv: string) =>
  line('BOOKMARK', { metadata: { resourceVersion: rv, annotations: { [INITIAL_EVENTS_END]: 'true' } } });
const until = async (what: string, ok: () => boolean) => {
  for (const deadline = Date.now() + 10_000; !ok(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 10));
  }
};
const isWatch = (s: { url: URL }) => s.url.searchParams.get('watch') === 'true';
const streams = (s: { url: URL }) => s.url.searchParams.get('sendInitialEvents') === 'true';

/** A reflector whose lists and events are recorded in `log` in the order they happen. */
function reflector(o: Partial<ReflectorOptions> = {}) {
  const lists: string[][] = [];
  const upserts: string[] = [];
  const log: string[] = [];
  r = new Reflector({
    client: new KubeClient(server.access),
    path: '/api/v1/nodes',
    labelSelector: 'a=b',
    list: () => {
      const names: string[] = [];
      return {
        add: (x) => {
          names.push((x as Obj).metadata.name);
          log.push(`add ${(x as Obj).metadata.name}`);
        },
        done: () => {
          lists.push(names);
          log.push('done');
        },
      };
    },
    upsert: (x) => void upserts.push((x as Obj).metadata.name),
    remove: () => undefined,
    ...o,
  });
  return { r, lists, upserts, log };
}

describe('reflector', () => {
  it('streams the initial state (watch-list) into one list its bookmark ends; the same response goes on watching', async () => {
    server.handle((s, res) => {
      if (!isWatch(s) || !streams(s)) return json(res, 500, statusBody(500, 'InternalError', 'unexpected'));
      res.writeHead(200);
      res.write(line('ADDED', obj('n1', '3')) + line('ADDED', obj('n2', '7')) + endOfInitial('10'));
      setTimeout(() => res.write(line('MODIFIED', obj('n1', '12'))), 100); // left open
    });
    const { r: ref, lists, upserts } = reflector();
    await ref.start();
    expect(lists).toEqual([['n1', 'n2']]);
    await until('the watch event', () => upserts.length === 1);
    expect(upserts).toEqual(['n1']);
    expect(server.seen).toHaveLength(1);
    const q = server.seen[0].url.searchParams;
    expect(q.get('resourceVersionMatch')).toBe('NotOlderThan');
    expect(q.get('labelSelector')).toBe('a=b');
    expect(q.get('allowWatchBookmarks')).toBe('true');
    expect(q.has('resourceVersion')).toBe(false);
    expect(ref.stats).toMatchObject({ lists: 1, watches: 1, initial: 'watch-list' });
  });

  it('an apiserver that refuses watch-list (422) is listed a page at a time, each page handed over before the next', async () => {
    server.handle((s, res) => {
      if (isWatch(s) && streams(s))
        return json(res, 422, statusBody(422, 'Invalid', 'sendInitialEvents is forbidden for watch'));
      if (isWatch(s)) {
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
    const { r: ref, lists, upserts, log } = reflector();
    const requests: string[] = [];
    const seen = server.seen;
    const push = seen.push.bind(seen);
    seen.push = (...s) => {
      for (const x of s) requests.push(`${isWatch(x) ? 'watch' : 'list'} ${x.url.searchParams.get('continue') ?? ''}`);
      log.push(`request ${requests.at(-1)}`);
      return push(...s);
    };
    await ref.start();
    expect(lists).toEqual([['n1', 'n2']]);
    // The first page's object reached the caller before the second page was asked for.
    expect(log.indexOf('add n1')).toBeLessThan(log.indexOf('request list next'));
    await until('the watch event', () => upserts.length === 1);
    const w = server.seen.filter((s) => isWatch(s) && !streams(s));
    expect(w).toHaveLength(1);
    expect(w[0].url.searchParams.get('resourceVersion')).toBe('10');
    expect(ref.stats.initial).toBe('pages');
  });

  it('a watch-list cut before its bookmark is thrown away and read again', async () => {
    let attempt = 0;
    server.handle((_s, res) => {
      attempt++;
      res.writeHead(200);
      if (attempt === 1) return res.end(line('ADDED', obj('half', '3')));
      res.write(line('ADDED', obj('whole', '4')) + endOfInitial('10'));
    });
    const { r: ref, lists, log } = reflector();
    await ref.start();
    expect(lists).toEqual([['whole']]);
    expect(log).toEqual(['add half', 'add whole', 'done']);
    expect(server.seen.every(streams)).toBe(true);
  });

  it('a watch that ends at once with nothing delivered is an error, retried after a backoff, not at once', async () => {
    server.handle((s, res) => {
      if (streams(s)) return res.writeHead(200).end(endOfInitial('5'));
      res.writeHead(200).end();
    });
    const errors: string[] = [];
    const { r: ref } = reflector({ onError: (e) => void errors.push((e as Error).message) });
    await ref.start();
    await until('the first short watch', () => errors.length === 1);
    await new Promise((res) => setTimeout(res, 500));
    expect(errors[0]).toMatch(/ended at once without an event/);
    // A spinning loop would have made hundreds of requests in that half second; the backoff allows one.
    expect(ref.stats.watches).toBe(2);
  });

  it('an ERROR event with 410 relists; another ERROR is reported', async () => {
    let watches = 0;
    server.handle((s, res) => {
      if (!isWatch(s)) return json(res, 200, { items: [obj('n1', '5')], metadata: { resourceVersion: '5' } });
      watches++;
      const code = watches === 1 ? 410 : 500;
      res.writeHead(200).end(line('ERROR', { kind: 'Status', code, message: `code ${code}` }));
    });
    const errors: string[] = [];
    const { r: ref, lists } = reflector({ initial: 'pages', onError: (e) => void errors.push((e as Error).message) });
    await ref.start();
    await until('a relist and a reported error', () => lists.length === 2 && errors.length === 1);
    expect(errors[0]).toMatch(/watch \/api\/v1\/nodes: 500 code 500/);
    expect(ref.stats.lists).toBe(2);
  });

  it('a first list refused (403) rejects start() at once, as a call would', async () => {
    server.handle((_s, res) => json(res, 403, statusBody(403, 'Forbidden', 'nodes is forbidden')));
    const { r: ref } = reflector();
    await expect(ref.start()).rejects.toMatchObject({ code: 403 });
    expect(server.seen).toHaveLength(1);
  });
});
