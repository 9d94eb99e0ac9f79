import { describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { SecretSource, type SecretData, type SecretStore } from '../../src/tls/secret-source.ts';
import { bundleOps } from '../../src/kube/ca-bundle.ts';

/** An in-memory Secret with resourceVersion semantics, shared by several sources like replicas share one. */
function memoryStore() {
  let stored: { data: SecretData; resourceVersion: string } | undefined;
  let rv = 0;
  const writes: string[] = [];
  const store: SecretStore = {
    read: async () => stored && { data: { ...stored.data }, resourceVersion: stored.resourceVersion },
    create: async (data) => {
      if (stored) return false;
      stored = { data, resourceVersion: String(++rv) };
      writes.push('create');
      return true;
    },
    replace: async (data, resourceVersion) => {
      if (stored?.resourceVersion !== resourceVersion) return false;
      stored = { data, resourceVersion: String(++rv) };
      writes.push('replace');
      return true;
    },
  };
  return { store, writes, get: () => stored };
}

const serial = (pem: string) => new X509Certificate(pem).serialNumber;

describe('SecretSource', () => {
  it('replicas starting together agree on one pair: one creates, the others adopt it', async () => {
    const m = memoryStore();
    const replicas = [0, 1, 2].map(() => new SecretSource({ store: m.store, sans: ['meshgate.meshgate.svc'] }));
    await Promise.all(replicas.map((r) => r.start()));
    replicas.forEach((r) => r.stop());
    expect(m.writes).toEqual(['create']);
    expect(new Set(replicas.map((r) => r.current().cert)).size).toBe(1);
    expect(replicas[0].current().ca).toBe(m.get()!.data['ca.crt']);
  });

  it('renews at two thirds of the life, keeping the CA (the caBundle does not change)', async () => {
    const m = memoryStore();
    let now = Date.now();
    const validityMs = 3600_000;
    const a = new SecretSource({ store: m.store, sans: ['x'], validityMs, now: () => now });
    const b = new SecretSource({ store: m.store, sans: ['x'], validityMs, now: () => now });
    await a.sync();
    const first = a.current();
    now += validityMs * 0.5;
    await a.sync();
    expect(a.current().cert).toBe(first.cert);
    now += validityMs * 0.2;
    const seen: string[] = [];
    a.onChange((p) => seen.push(serial(p.cert)));
    await a.sync();
    expect(m.writes).toEqual(['create', 'replace']);
    expect(serial(a.current().cert)).not.toBe(serial(first.cert));
    expect(seen).toEqual([serial(a.current().cert)]);
    expect(a.current().ca).toBe(first.ca);
    expect(new X509Certificate(a.current().cert).verify(new X509Certificate(first.ca!).publicKey)).toBe(true);
    await b.sync();
    expect(b.current().cert).toBe(a.current().cert);
  });

  it('gives up with a clear error when it keeps losing the race', async () => {
    const store: SecretStore = { read: async () => undefined, create: async () => false, replace: async () => false };
    await expect(new SecretSource({ store, sans: ['x'] }).sync()).rejects.toThrow(/could not agree/);
  });
});

describe('caBundle patch', () => {
  it('patches only webhooks whose bundle differs', () => {
    const ops = bundleOps({ webhooks: [{ clientConfig: { caBundle: 'same' } }, { clientConfig: {} }, {}] }, 'same');
    expect(ops.map((o) => o.path)).toEqual(['/webhooks/1/clientConfig/caBundle', '/webhooks/2/clientConfig/caBundle']);
  });
});
