/**
 * The level at which meshgate guards a pod's namespace now, for the capture repair (src/repair/capture/level.ts):
 * read from meshgate's own MutatingWebhookConfiguration and the namespace's labels (a scripted apiserver on loopback),
 * the route of the entry that selects it; undefined when no namespace entry does (only a pod-label entry, or the
 * opt-in label removed) or the configuration is gone; both reads kept for a few seconds, a failed read not kept.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/api/client.ts';
import { kubeLevelOf, TTL_MS } from '../../src/repair/capture/level.ts';
import { fakeServer, type FakeServer } from '../kube/api/fake-server.ts';
import { levelSelector } from '../support/level-entries.ts';

const json = (res: ServerResponse, code: number, body: unknown) =>
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
const entry = (name: string, path: string, level: string, objectSelector?: object) => ({
  name,
  clientConfig: { service: { namespace: 'meshgate', name: 'meshgate', path } },
  namespaceSelector: levelSelector(level),
  ...(objectSelector ? { objectSelector } : {}),
});
const WEBHOOKS = [
  entry('ns-meshgate.mutate.meshgate.io', '/mutate', 'enforce'),
  entry('ns-meshgate-audit.mutate.meshgate.io', '/mutate/audit', 'audit'),
];
const NAMESPACES: Record<string, Record<string, string>> = {
  shop: { 'meshgate.io/inject': 'enabled', 'meshgate.io/enforcement': 'enforce' },
  trial: { 'meshgate.io/inject': 'enabled' },
  gone: { team: 'x' },
};

let server: FakeServer;
let t = 0;
let webhooks: object[] | undefined = WEBHOOKS;
let fail = false;
beforeEach(async () => {
  server = await fakeServer();
  t = 0;
  webhooks = WEBHOOKS;
  fail = false;
  server.handle((s, res) => {
    if (fail) return json(res, 403, { kind: 'Status', code: 403, message: 'forbidden' });
    const ns = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(s.url.pathname)?.[1];
    if (ns)
      return NAMESPACES[ns] ? json(res, 200, { metadata: { name: ns, labels: NAMESPACES[ns] } }) : json(res, 404, {});
    if (s.url.pathname === '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/meshgate')
      return webhooks ? json(res, 200, { webhooks }) : json(res, 404, { kind: 'Status', code: 404 });
    json(res, 404, {});
  });
});
afterEach(() => server.close());

const levelOf = () => {
  const client = new KubeClient(server.access, { sleep: async () => undefined, maxAttempts: 1 });
  return kubeLevelOf(client, 'meshgate', () => t);
};

describe('the level of a pod’s namespace, for the capture repair', () => {
  it('the route of the entry that selects it; undefined when none does, or for a namespace that is gone', async () => {
    const of = levelOf();
    expect(await of('shop')).toBe('enforce');
    expect(await of('trial')).toBe('audit');
    expect(await of('gone')).toBeUndefined();
    expect(await of('nowhere')).toBeUndefined();
  });

  it('an entry that selects pods by their labels does not make the namespace guarded', async () => {
    webhooks = [entry('pod.mutate.meshgate.io', '/mutate/selected-pods', 'enforce', { matchLabels: { a: 'b' } })];
    expect(await levelOf()('shop')).toBeUndefined();
  });

  it('no MutatingWebhookConfiguration: nothing is guarded', async () => {
    webhooks = undefined;
    expect(await levelOf()('shop')).toBeUndefined();
  });

  it('reads are kept for TTL_MS (two requests for a burst), a failed read is not kept', async () => {
    const of = levelOf();
    await Promise.all([of('shop'), of('shop'), of('shop')]);
    expect(server.seen).toHaveLength(2);
    t += TTL_MS;
    await of('shop');
    expect(server.seen).toHaveLength(4);
    fail = true;
    t += TTL_MS;
    await expect(of('shop')).rejects.toThrow(/forbidden/);
    fail = false;
    expect(await of('shop')).toBe('enforce');
  });
});
