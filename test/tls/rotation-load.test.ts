/**
 * A CA rotation under load, over real TLS: two meshgate servers (startServer, loopback) share one in-memory
 * Secret on a fake clock, while 16 concurrent HTTPS clients open a new connection per request, alternating
 * between the servers, half on TLS 1.2 (ECDHE-ECDSA) and half on TLS 1.3, each trusting only the caBundle
 * published at that moment — re-read for every connection, as the apiserver does after a webhook
 * configuration changes. The bundle reaches the clients late on purpose: a server's new bundle is published
 * only after 80 more handshakes, standing in for the caBundle patch and the apiserver's informer.
 *
 * The clock moves 5 s per poll; serving certificates live 90 s and CAs 180 s, so the run renews the leaf,
 * prepares a CA at 120 s, promotes it after the 20 s overlap and retires the old one, all within a few
 * minutes of real time (certificates are backdated 5 min, so the fake clock may run that far ahead). The
 * control run replaces the CA in one step, as meshgate did before, and must show failed handshakes: the test
 * can see them when they happen.
 */
import { afterEach, describe, expect, it } from 'vitest';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { SecretSource } from '../../src/tls/secret-source.ts';
import type { RunningServer } from '../../src/server/start.ts';
import { issueCA, issueLeaf } from '../../src/tls/authority.ts';
import { splitPem, toSecretData } from '../../src/tls/trust-state.ts';
import { HOST, serve } from './helpers.ts';
import { cluster, type Cluster } from './rotation-helpers.ts';

const SECOND = 1000;
const POLL_MS = 5 * SECOND;
const CLIENTS = 16;
/** Handshakes between two polls, and between a bundle change on a server and its publication. */
const PER_POLL = 80;
/** Upper bound on requests in one run, so the load stops by itself whatever happens. */
const MAX_REQUESTS = 20_000;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

class Load {
  ok = 0;
  failures = new Map<string, number>();
  byCa = new Map<string, number>();
  byVersion = new Map<string, number>();
  #stopped = false;
  #loops: Array<Promise<void>> = [];
  #waiters: Array<{ at: number; resolve: () => void }> = [];
  readonly #ports: number[];
  readonly #bundle: () => string;

  constructor(ports: number[], bundle: () => string) {
    this.#ports = ports;
    this.#bundle = bundle;
  }

  get total(): number {
    return this.ok + [...this.failures.values()].reduce((a, b) => a + b, 0);
  }

  start(): void {
    for (let i = 0; i < CLIENTS; i++) this.#loops.push(this.#loop(i));
  }

  async #loop(i: number): Promise<void> {
    const version = i % 2 ? 'TLSv1.3' : 'TLSv1.2';
    for (let n = i; !this.#stopped && this.total < MAX_REQUESTS; n++) {
      try {
        const { status, peer, protocol } = await get(this.#ports[n % this.#ports.length], this.#bundle(), version);
        if (status !== 200) throw Object.assign(new Error(`status ${status}`), { code: `HTTP_${status}` });
        this.ok++;
        this.byCa.set(peer, (this.byCa.get(peer) ?? 0) + 1);
        this.byVersion.set(protocol, (this.byVersion.get(protocol) ?? 0) + 1);
      } catch (err) {
        const code = (err as { code?: string }).code ?? (err as Error).message;
        this.failures.set(code, (this.failures.get(code) ?? 0) + 1);
      }
      for (const w of this.#waiters.filter((w) => this.total >= w.at)) w.resolve();
    }
  }

  /** Resolves once `count` more requests have finished (or the load was capped). */
  more(count: number): Promise<void> {
    const at = Math.min(this.total + count, MAX_REQUESTS);
    return new Promise((resolve) => this.#waiters.push({ at, resolve }));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#loops);
  }
}

/** One GET /healthz on a new connection, trusting `ca` only; the issuer of the served certificate by its CN. */
function get(
  port: number,
  ca: string,
  version: 'TLSv1.2' | 'TLSv1.3',
  path = '/healthz',
): Promise<{ status: number; peer: string; protocol: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: HOST, port, path, ca, agent: false, minVersion: version, maxVersion: version },
      (res) => {
        const socket = res.socket as TLSSocket;
        const peer = socket.getPeerX509Certificate()?.issuer.match(/CN=(.*)/)?.[1] ?? '?';
        const protocol = `${socket.getProtocol()} ${socket.getCipher().name}`;
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, peer, protocol, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface Run {
  c: Cluster;
  ports: number[];
  replicas: SecretSource[];
  load: Load;
  /**
   * One poll: the clock moves on, each replica syncs followed by half of PER_POLL handshakes (so a moment
   * where the two replicas serve different certificates is under load too), then any new bundle is published.
   */
  poll(): Promise<void>;
  /** Requests finished while the two replicas served certificates from different CAs. */
  mixed(): number;
}

async function run(): Promise<Run> {
  const c = cluster();
  const replicas = ['r1', 'r2'].map((id) =>
    c.replica(id, { validityMs: 90 * SECOND, caValidityMs: 180 * SECOND, overlapMs: 20 * SECOND, pollMs: POLL_MS }),
  );
  const servers: RunningServer[] = [];
  let pending: string | undefined;
  for (const r of replicas) {
    const server = await serve({ certSource: r });
    cleanups.push(() => server.shutdown());
    servers.push(server);
    // As the caBundle keeper: a replica's new bundle is patched into the configurations (published later).
    r.onChange((pair) => {
      pending = pair.ca;
    });
  }
  c.published.bundle = replicas[0].current().ca!;
  const load = new Load(
    servers.map((s) => s.port),
    () => c.published.bundle,
  );
  load.start();
  cleanups.push(() => load.stop());
  await load.more(PER_POLL);
  let n = 0;
  let mixed = 0;
  const issuer = (r: SecretSource) => new X509Certificate(r.current().cert).issuer;
  const poll = async () => {
    c.clock.advance(POLL_MS);
    const order = n++ % 2 ? [...replicas].reverse() : replicas;
    for (const r of order) {
      await r.sync();
      const [before, differ] = [load.total, issuer(replicas[0]) !== issuer(replicas[1])];
      await load.more(PER_POLL / 2);
      if (differ) mixed += load.total - before;
    }
    if (pending !== undefined) [c.published.bundle, pending] = [pending, undefined];
  };
  return { c, ports: servers.map((s) => s.port), replicas, load, poll, mixed: () => mixed };
}

const report = (label: string, load: Load) => {
  console.log(
    `[rotation-load] ${label}: ${load.total} HTTPS requests (new TLS connection each), ${load.ok} ok, ` +
      `${load.total - load.ok} failed ${JSON.stringify(Object.fromEntries(load.failures))}`,
  );
  console.log(`[rotation-load] ${label}: served by CA ${JSON.stringify(Object.fromEntries(load.byCa))}`);
  console.log(`[rotation-load] ${label}: ${JSON.stringify(Object.fromEntries(load.byVersion))}`);
};

describe('CA rotation under load', () => {
  it('renews, prepares, promotes and retires with zero failed handshakes', async () => {
    const { c, ports, load, poll, mixed } = await run();
    const seen = () => c.events.map((e) => e.event).filter((e) => !e.startsWith('waiting_'));
    let overlap = 0;
    let scrape = '';
    for (let i = 0; i < 40 && !seen().includes('ca_retired'); i++) {
      const before = load.total;
      await poll();
      if (splitPem(c.published.bundle).length === 2) {
        overlap += load.total - before;
        scrape ||= (await get(ports[1], c.published.bundle, 'TLSv1.3', '/metrics')).body;
      }
    }
    // And a few polls on the new CA alone.
    for (let i = 0; i < 3; i++) await poll();
    await load.stop();
    report('rotation', load);
    console.log(`[rotation-load] rotation: steps ${seen().join(' → ')}`);
    console.log(
      `[rotation-load] rotation: ${overlap} requests while the published bundle held both CAs, ${mixed()} while the two replicas served certificates from different CAs`,
    );

    expect(seen()).toEqual(
      expect.arrayContaining(['created', 'leaf_renewed', 'ca_prepared', 'ca_promoted', 'ca_retired']),
    );
    expect(load.byCa.size).toBe(2); // certificates from both CAs were served
    expect(load.byVersion.size).toBe(2);
    expect(mixed()).toBeGreaterThan(0);
    // The expiry gauges, scraped during the overlap.
    expect(scrape).toMatch(/^meshgate_ca_bundle_certificates 2$/m);
    expect(scrape).toMatch(/^meshgate_certificate_expiration_timestamp_seconds\{certificate="serving"\} \d{10}$/m);
    expect(scrape).toMatch(/^meshgate_certificate_expiration_timestamp_seconds\{certificate="ca"\} \d{10}$/m);
    expect(Object.fromEntries(load.failures)).toEqual({});
    expect(load.ok).toBeGreaterThan(2000);
    // The rotation runs on its own schedule; on a loaded 2-core machine it needs more than the default 30 s.
  }, 120_000);

  it('control: replacing the CA in one step (no overlap) fails handshakes, and the load sees it', async () => {
    const { c, load, poll } = await run();
    await poll();
    const ca = issueCA(180 * SECOND, c.clock.now());
    const leaf = issueLeaf(ca, ['127.0.0.1'], 90 * SECOND, c.clock.now());
    const current = c.store.peek()!;
    await c.store.replace(
      toSecretData({
        leaf: { cert: leaf.cert, key: leaf.key, x509: new X509Certificate(leaf.cert) },
        signer: ca,
        replicas: {},
      }),
      current.resourceVersion,
    );
    await poll();
    await poll();
    await load.stop();
    report('control', load);
    expect(load.total - load.ok).toBeGreaterThan(0);
    expect(
      [...load.failures.keys()].every((k) =>
        /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/.test(k),
      ),
    ).toBe(true);
  });
});
