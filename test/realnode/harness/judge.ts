// Judges, from inside a pod's own network namespace, whether the pod's traffic is really captured by its proxy:
//  rules         the pod netns' nat table has the mesh's redirect chain (iptables-save, nft and legacy backends;
//                istio-cni picks one by itself)
//  reachesProxy  a TCP connection from inside the pod netns to an outside address (203.0.113.1:80, TEST-NET-3,
//                unreachable in the test namespace) is answered by the stand-in proxy on its outbound port, which
//                names the original destination it saw (SO_ORIGINAL_DST)
// Both come from the kernel's real state, not from anything the pod or meshgate claims.
// Istio ambient (a node whose istio-cni runs with ambient on): no proxy in the pod; ztunnel's in-pod mode installs
// ISTIO_PRERT and ISTIO_OUTPUT in the pod's nat table (istio cni/pkg/iptables) and listens inside the pod's netns.
//  rules         both chains in the pod netns' nat table
//  reachesProxy  the probe connection is ACCEPTED inside the pod netns (without the rules it fails at once: no
//                route), and ztunnel's admin (/config_dump "workloadState") lists the pod's uid as Up: the pod was
//                handed to ztunnel. ztunnel then closes it (its passthrough upstream has no route either).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { assertIsolated } from './isolation.ts';
import type { RealNode } from './node.ts';
import { ztunnelWorkloads } from '../../meshbin/istio-ambient.ts';

const run = promisify(execFile);

/** Where the probe connection goes. Never 192.0.2.1: that is this machine's real gateway. */
export const PROBE_HOST = '203.0.113.1';
export const PROBE_PORT = 80;
/** The proxy's outbound capture port (Istio's default, and meshgate's). */
export const OUTBOUND_PORT = 15001;
/** Linkerd's (LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR, linkerd-cni's outgoing-proxy-port). */
export const LINKERD_OUTBOUND_PORT = 4140;
/** 3 s: a redirected connection answers in milliseconds; an unredirected one fails at once (no route). */
const DIAL_TIMEOUT_MS = 3_000;
/** Redirect chains of the meshes: Istio's (istio-cni, istio-init) and Linkerd's (proxy-init, linkerd-cni). */
export const MESH_CHAINS = /^:(ISTIO_OUTPUT|ISTIO_REDIRECT|PROXY_INIT_OUTPUT|PROXY_INIT_REDIRECT) /m;
/** ztunnel's in-pod chains (istio cni/pkg/iptables ChainInpodPrerouting, ChainInpodOutput): both must be there. */
const AMBIENT_CHAINS = [/^:ISTIO_PRERT /m, /^:ISTIO_OUTPUT /m];

export interface Redirection {
  rules: boolean;
  reachesProxy: boolean;
  /** Which iptables backends held the mesh chains ('nft', 'legacy'). */
  backends: string[];
  /** Count of nat rules (-A lines) in the pod netns, all backends. */
  natRules: number;
  /** What the probe connection saw: the proxy's line, or the error. */
  dial: string;
  netns: string;
}

async function natTable(netns: string, save: string): Promise<string> {
  try {
    return (await run('nsenter', [`--net=${netns}`, save, '-t', 'nat'], { timeout: 10_000 })).stdout;
  } catch (err) {
    const e = err as { code?: string; stderr?: string };
    if (e.code === 'ENOENT') return '';
    throw new Error(`${save} in ${netns} failed: ${e.stderr ?? String(err)}`);
  }
}

/** Judges one pod on the node it runs on. The pod must have a sandbox (Running, or at least its netns set up). */
export async function redirectionOf(node: RealNode, pod: V1Pod): Promise<Redirection> {
  const uid = pod.metadata?.uid;
  if (!uid) throw new Error(`pod ${pod.metadata?.name} has no uid: pass the object the apiserver returned`);
  const netns = await node.podNetns(uid);
  const tables = {
    nft: await natTable(netns, 'iptables-nft-save'),
    legacy: await natTable(netns, 'iptables-legacy-save'),
  };
  const ambient = node.cni.ambient === true;
  const has = (t: string) => (ambient ? AMBIENT_CHAINS.every((c) => c.test(t)) : MESH_CHAINS.test(t));
  const backends = Object.entries(tables)
    .filter(([, t]) => has(t))
    .map(([b]) => b);
  const natRules = Object.values(tables).reduce(
    (n, t) => n + t.split('\n').filter((l) => l.startsWith('-A ')).length,
    0,
  );

  assertIsolated(); // the probe address must have no way out of the test namespace, checked before every dial
  const dialScript = new URL('./dial.ts', import.meta.url).pathname;
  const { stdout } = await run(
    'nsenter',
    [`--net=${netns}`, process.execPath, dialScript, PROBE_HOST, String(PROBE_PORT), String(DIAL_TIMEOUT_MS)],
    { timeout: DIAL_TIMEOUT_MS + 10_000 },
  );
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { connected: boolean; line?: string; error?: string };
  if (ambient) {
    const state = await ztunnelWorkloads().then(
      (w) => w.get(uid) ?? 'not listed',
      (err: Error) => `admin not answering (${err.message})`,
    );
    return {
      rules: backends.length > 0,
      reachesProxy: result.connected && state === 'Up',
      backends,
      natRules,
      dial: `${result.connected ? 'accepted in the pod netns' : result.error}; ztunnel: ${state}`,
      netns,
    };
  }
  const port = node.cni.mesh === 'linkerd' ? LINKERD_OUTBOUND_PORT : OUTBOUND_PORT;
  const expected = `meshgate-e2e-proxy port=${port} orig=${PROBE_HOST}:${PROBE_PORT}`;
  return {
    rules: backends.length > 0,
    reachesProxy: result.connected && result.line === expected,
    backends,
    natRules,
    dial: result.error ?? result.line ?? '',
    netns,
  };
}
