/**
 * The peers of `npm run bench -- --peers`, each a server in a process of its own, pinned to the same CPU:
 *   echo              meshgate's transport alone (POST /allow: decode, answer allowed), the corpus pods
 *   meshgate custom   meshgate injecting its own proxy (mesh custom, POST /mutate), the corpus pods
 *   meshgate istio    meshgate in companion mode (mesh istio, POST /mutate), the corpus pods as Istio injected them
 *   echo istio        meshgate's transport alone (POST /allow), the corpus pods as Istio injected them (issue 35)
 *   floor, floor raw  a bare node:https server answering allowed (floor-server.ts: with JSON.parse of the body, and
 *                     without), the corpus pods as Istio injected them: what no webhook in Node goes below (issue 35)
 *   bare own,         meshgate's handler behind that same bare server (floor-server.ts, mode decide; POST /mutate),
 *   bare companion    on the corpus pods (mesh custom) and on the Istio-injected ones (mesh istio): what meshgate's
 *                     reviews would cost with no fastify, metrics or log around them (issue 35)
 *   istio             Istio 1.27's own injection webhook (test/istio, POST /inject), the corpus pods
 *   kyverno           Kyverno with a ClusterPolicy that adds a sidecar (bench/peers/kyverno.ts), the corpus pods
 * Istio and Kyverno need a cluster (their informers), so a harness control plane runs beside them; meshgate's
 * peers get the same facts as static node state, as in part 1.
 */
import { dirname, join } from 'node:path';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { ControlPlane } from '../../test/e2e/harness/index.ts';
import { startIstioInjector } from '../../test/e2e/harness/index.ts';
import { SERVER_CPU, startServerChild } from '../procs.ts';
import type { CompiledServer } from '../compiled.ts';
import { post } from '../preflight.ts';
import type { Review } from '../corpus.ts';
import { pinProcess } from './proc-stats.ts';
import type { ServerSettings } from '../server.ts';
import type { FloorSettings } from './floor-server.ts';

export interface Peer {
  name: string;
  /** What it does with the bodies, for the table. */
  what: string;
  url: string;
  path: string;
  ca: string;
  /** TLS name its certificate holds (the preflight checks the chain and the name). */
  servername: string;
  pid: number;
  reviews: Review[];
  bodies: string[];
  stop(): Promise<void>;
}

export async function meshgatePeer(
  name: string,
  what: string,
  mesh: 'custom' | 'istio',
  route: '/allow' | '/mutate',
  reviews: Review[],
  verifiedNodes: string[],
  /** What to fork: bench/compiled.ts's compiled server and the image's Node flags, as the image runs meshgate. */
  server: CompiledServer,
): Promise<Peer> {
  const child = await startServerChild({ logLevel: 'warn', verifiedNodes, mesh }, server.execArgv, {
    cpu: SERVER_CPU,
    script: server.script,
  });
  return {
    name,
    what,
    url: child.url,
    path: route,
    ca: child.ca,
    servername: 'localhost',
    pid: child.pid,
    reviews,
    bodies: reviews.map((r) => JSON.stringify(r)),
    stop: () => child.stop(),
  };
}

/** A bare node:https server (floor-server.ts), compiled with the tree and run under the image's Node flags. */
export async function floorPeer(
  name: string,
  what: string,
  settings: FloorSettings,
  path: string,
  reviews: Review[],
  server: CompiledServer,
): Promise<Peer> {
  const script = join(dirname(server.script), 'peers', 'floor-server.js');
  const child = await startServerChild(settings as unknown as ServerSettings, server.execArgv, {
    cpu: SERVER_CPU,
    script,
  });
  return {
    name,
    what,
    url: child.url,
    path,
    ca: child.ca,
    servername: 'localhost',
    pid: child.pid,
    reviews,
    bodies: reviews.map((r) => JSON.stringify(r)),
    stop: () => child.stop(),
  };
}

/**
 * Istio's injector with the istio-discovery chart's template and values (the harness renders them), its log at
 * `warn` like meshgate's bench server (no line per review), GOMAXPROCS=1 and every thread pinned to the server CPU.
 */
export async function istioPeer(
  cp: ControlPlane,
  reviews: Review[],
): Promise<Peer & { injected: Review[]; injectedCount: number }> {
  const istio = await startIstioInjector(cp, { logLevel: 'warn', env: { GOMAXPROCS: '1' } });
  try {
    pinProcess(istio.pid, SERVER_CPU);
    const url = istio.url.replace(/\/inject$/, '');
    const servername = 'istiod.istio-system.svc';
    // The companion's input: each pod as Istio's webhook left it (patched, or as it was when Istio skipped it).
    const injected: Review[] = [];
    let injectedCount = 0;
    for (const r of reviews) {
      const res = await post(url, istio.caPem, '/inject', JSON.stringify(r), servername);
      if (res.status !== 200)
        throw new Error(`Istio /inject answered HTTP ${res.status} for ${r.request.uid}: ${res.text.slice(0, 200)}`);
      const patch = (JSON.parse(res.text) as { response?: { patch?: string } }).response?.patch;
      let object = r.request.object;
      if (patch) {
        const ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as Operation[];
        object = jsonpatch.applyPatch(structuredClone(object), ops, true, false).newDocument;
        injectedCount++;
      }
      injected.push({ ...r, request: { ...r.request, object } });
    }
    return {
      name: 'istio',
      what: "Istio 1.27's injector, /inject",
      url,
      path: '/inject',
      ca: istio.caPem,
      servername,
      pid: istio.pid,
      reviews,
      bodies: reviews.map((r) => JSON.stringify(r)),
      injected,
      injectedCount,
      stop: () => istio.stop(),
    };
  } catch (err) {
    await istio.stop();
    throw err;
  }
}
