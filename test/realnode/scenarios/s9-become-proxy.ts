// S9: who can become the proxy (issue 21 §3, issue 31 §2, issue 33 §5; docs/security.md). Istio's redirect exempts
// the proxy's UID and GID 1337, so an app container that is or becomes 1337 sends past the proxy while its pod's
// network namespace still looks redirected. The app is test/realnode/images/become-proxy.c (its entrypoint carries
// cap_setuid,cap_setgid+p): it tries setgid/setuid(1337), connects to the probe address and reports. Every pod is
// bare and unbound; meshgate pins it to the verified node rn-1 (the real istio-cni).
//   s9 (guarded at admission: in apps.restrictedNamespaces, held to apps.privileges: restricted)
//     root           runAsUser 0, no escalation, the runtime's default capabilities   → refused (proxy_escalation)
//     keeps-caps     runAsUser 1000, no escalation, default capabilities              → refused (proxy_escalation)
//     drop-prefixed  root dropping CAP_SETUID, CAP_SETGID, CAP_NET_RAW by those names  → refused: containerd drops
//                    nothing by them (issue 33 §5), and an unbound pod gets the strictest reading
//     compliant      runAsUser 1000, no escalation, drop ALL                          → setuid EPERM, reaches the proxy
//   s9-node (apps.privileges: node, the default: admission judges only what the spec states; the node decides):
//     s9-node-side.ts
// keeps-caps differs from compliant only by the drop: the file capability gives a non-root process SETUID even under
// no_new_privs. The node side's connections that got past before the node stopped the app are the measured window,
// counted apart (W); an app admitted in s9 that gets past, or one in s9-node that gets past and is not stopped, is
// meshgate's failure and counts in `unredirected`.
import type { V1Pod, V1SecurityContext } from '@kubernetes/client-node';
import type { RealCluster } from '../harness/cluster.ts';
import { assertIsolated } from '../harness/isolation.ts';
import { BECOME_PROXY_FILE_CAPS, BECOME_PROXY_REF, PROXY_UID } from '../harness/images.ts';
import { LINKERD_OUTBOUND_PORT, OUTBOUND_PORT, PROBE_HOST, PROBE_PORT } from '../harness/judge.ts';
import { NODE_SIDE_NAMESPACE, OPT_IN_LABELS, RESTRICTED_NAMESPACE } from '../harness/mesh.ts';
import { APP_CONTAINER, PodMonitor, redirected } from '../harness/monitor.ts';
import { cannotBecomeProxy } from '../harness/pods.ts';
import { counts, oneLine, type Scenario, unredirectedDetail, waitRight } from './common.ts';
import { readProbe, type Probe } from './probe-report.ts';
import { follow, NODE_SHAPES, nodeDescribe, nodePod, userImage } from './s9-node-side.ts';
import { judgeNodeSide } from './s9-verdict.ts';

const NS = RESTRICTED_NAMESPACE;
/** The app's UID and GID where it is not root: anything but the proxy's 1337. */
const APP_ID = 1000;
/** Pods start and report in about 5 s; the node side's delayed app streams until ~25 s; 90 s bounds a stuck one. */
const DEADLINE_MS = 90_000;
/**
 * Linkerd's injector copies the app's capabilities onto linkerd-init (its inject.go and _proxy-init.tpl), which
 * meshgate's linkerd profile refuses as `impostor_container` until issue 31 §1's fix: the drop-prefixed pods would
 * show that refusal, not who can become the proxy, so the Linkerd line runs S9 without them.
 */
const COPIES_APP_CAPABILITIES: ReadonlySet<string> = new Set(['linkerd']);
const runs = (c: RealCluster, shape: string) => shape !== 'drop-prefixed' || !COPIES_APP_CAPABILITIES.has(c.meshName);

/** Linkerd's proxy UID (linkerd2-cni's proxy-uid, the linkerd profile's). */
const LINKERD_UID = 2102;
/** The UID the mesh's redirect exempts and the answer of its stand-in proxy to a connection redirected to it. */
function proxyOf(c: RealCluster): { id: number; line: string } {
  const [id, port] = c.meshName === 'linkerd' ? [LINKERD_UID, LINKERD_OUTBOUND_PORT] : [PROXY_UID, OUTBOUND_PORT];
  return { id, line: `meshgate-e2e-proxy port=${port} orig=${PROBE_HOST}:${PROBE_PORT}` };
}
/** SETGID and SETUID are capability bits 6 and 7 (linux/capability.h). */
const SETID_BITS = (1n << 6n) | (1n << 7n);

type Shape = 'root' | 'keeps-caps' | 'drop-prefixed' | 'compliant';
const SECURITY: Record<Shape, V1SecurityContext> = {
  root: { runAsUser: 0, runAsGroup: 0, allowPrivilegeEscalation: false },
  'keeps-caps': { runAsUser: APP_ID, runAsGroup: APP_ID, runAsNonRoot: true, allowPrivilegeEscalation: false },
  'drop-prefixed': {
    runAsUser: 0,
    runAsGroup: 0,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['CAP_SETUID', 'CAP_SETGID', 'CAP_NET_RAW'] },
  },
  compliant: cannotBecomeProxy(APP_ID),
};
const DESCRIBE: Record<Shape, string> = {
  root: 'uid 0, default capabilities',
  'keeps-caps': `uid ${APP_ID}, default capabilities, entrypoint ${BECOME_PROXY_FILE_CAPS}`,
  'drop-prefixed': 'uid 0, drop [CAP_SETUID, CAP_SETGID, CAP_NET_RAW]',
  compliant: `uid ${APP_ID}, drop ALL, entrypoint ${BECOME_PROXY_FILE_CAPS}`,
};
const ADMIT: Record<Shape, boolean> = { root: false, 'keeps-caps': false, 'drop-prefixed': false, compliant: true };

function probePod(shape: Shape, id: number): V1Pod {
  const app = {
    name: APP_CONTAINER,
    image: BECOME_PROXY_REF,
    imagePullPolicy: 'Never',
    securityContext: SECURITY[shape],
    env: [{ name: 'BECOME_PROXY_ID', value: String(id) }],
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: shape, labels: { app: shape } },
    spec: { containers: [app], terminationGracePeriodSeconds: 2 },
  };
}

/** What the app did, in a person's words. */
function told(p: Probe, proxy: { id: number; line: string }): string {
  const got = p.line === proxy.line ? `reached the proxy (${p.line})` : `did not reach the proxy (${p.dial})`;
  return (
    `CapPrm ${p.capPrm}, NoNewPrivs ${p.noNewPrivs}; setgid(${proxy.id}) ${p.setgid}, setuid(${proxy.id}) ${p.setuid} → ` +
    `uid ${p.uidAfter} gid ${p.gidAfter}; its connection to ${PROBE_HOST}:${PROBE_PORT} ${got}`
  );
}

/** kubectl create (which prints the admission warnings a person sees); the created pod, or undefined if refused. */
async function create(c: RealCluster, ns: string, pod: V1Pod) {
  const r = await c.cp.kubectl(['create', '-n', ns, '-o', 'json', '-f', '-'], { input: JSON.stringify(pod) });
  const warning = r.stderr.split('\n').find((l) => l.startsWith('Warning:'));
  return { pod: r.code === 0 ? (JSON.parse(r.stdout) as V1Pod) : undefined, stderr: r.stderr, warning };
}

/** s9's pods at admission: refused with proxy_escalation naming SETUID, or (compliant) admitted without a warning. */
async function admission(c: RealCluster, id: number, seen: string[], failures: string[]): Promise<Shape[]> {
  const admitted: Shape[] = [];
  for (const shape of (Object.keys(ADMIT) as Shape[]).filter((s) => runs(c, s))) {
    const r = await create(c, NS, probePod(shape, id));
    const what = `${NS}/${shape} (${DESCRIBE[shape]})`;
    if (r.pod) admitted.push(shape);
    if (!ADMIT[shape]) {
      if (r.pod) failures.push(`${what} was admitted`);
      else
        seen.push(
          `kubectl create -n ${NS} ${shape}: refused: ${oneLine(r.stderr.replace(/^.*denied the request: /s, ''), 400)}`,
        );
      if (!r.pod && !/container app .*holds SETUID.*\[proxy_escalation\]/.test(r.stderr))
        failures.push(`${what}: the refusal does not name the app container, SETUID and proxy_escalation`);
    } else if (!r.pod) failures.push(`${what} was not admitted: ${oneLine(r.stderr)}`);
    else if (r.warning) failures.push(`${what}: unexpected warning: ${oneLine(r.warning)}`);
  }
  return admitted;
}

export const s9: Scenario = {
  id: 'S9',
  title: "apps that are or become the proxy's UID: refused at admission, on the node, or stopped",
  namespaces: [NS, NODE_SIDE_NAMESPACE],
  async run({ cluster, mesh }) {
    await mesh.namespace(NS, OPT_IN_LABELS);
    await mesh.namespace(NODE_SIDE_NAMESPACE, OPT_IN_LABELS);
    const proxy = proxyOf(cluster);
    await cluster.importImage(await userImage(cluster, proxy.id));
    const m = new PodMonitor(cluster, [NS]);
    m.start();
    const failures: string[] = [];
    const seen: string[] = [];
    let escaped = 0;
    try {
      assertIsolated(); // the apps dial the probe address from their pods, even as 1337
      const admitted = await admission(cluster, proxy.id, seen, failures);
      const t0 = Date.now();
      // The node side: admitted with the namespace's warning, then followed on the node.
      const nodeSide = [];
      for (const shape of NODE_SHAPES.filter((s) => runs(cluster, s))) {
        const r = await create(cluster, NODE_SIDE_NAMESPACE, nodePod(shape, proxy.id));
        if (!r.pod) failures.push(`${NODE_SIDE_NAMESPACE}/${shape} was not admitted: ${oneLine(r.stderr, 400)}`);
        else nodeSide.push(follow(cluster, NODE_SIDE_NAMESPACE, r.pod, t0 + DEADLINE_MS, proxy));
      }
      const reports = [];
      for (const shape of admitted) reports.push({ shape, got: await readProbe(cluster, NS, shape, t0 + DEADLINE_MS) });
      await waitRight(t0, DEADLINE_MS, () => m.ran().length >= admitted.length);
      await m.settled();
      for (const { shape, got } of reports) {
        if (typeof got === 'string') {
          failures.push(`${NS}/${shape}: no report from the app within ${DEADLINE_MS / 1000} s: ${got}`);
          continue;
        }
        const { probe: p, pod } = got;
        const where = `${NS}/${shape} (${DESCRIBE[shape]}) on ${pod.spec?.nodeName}`;
        if (pod.spec?.nodeName !== 'rn-1') failures.push(`${where}: not on the verified node rn-1`);
        if (redirected(m.pods.get(pod.metadata?.uid ?? '')?.redirection) !== true)
          failures.push(`${where}: the judge did not find its pod redirected`);
        seen.push(`${where}: ${told(p, proxy)}`);
        if (p.setuid === 'ok' || p.setgid === 'ok' || p.line !== proxy.line) {
          escaped++;
          failures.push(`${where}: the admitted app got past the proxy: ${told(p, proxy)}`);
        }
        if ((BigInt(`0x${p.capPrm}`) & SETID_BITS) !== 0n)
          failures.push(`${where}: its permitted set holds SETUID/SETGID`);
      }
      const outcomes = await Promise.all(nodeSide);
      const verdict = judgeNodeSide(cluster.nodes[0].runtime, outcomes, nodeDescribe(proxy.id));
      seen.push(...verdict.seen);
      failures.push(...verdict.failures);
      failures.push(...unredirectedDetail(m));
      const c = counts(m);
      return {
        ...c,
        created: c.created + outcomes.length,
        running: c.running + outcomes.filter((o) => o.ran).length,
        unredirected: c.unredirected + escaped + verdict.unstopped,
        windowEscapes: verdict.windowEscapes,
        rightMs: failures.length === 0 ? Date.now() - t0 : undefined,
        seen,
        failures,
      };
    } finally {
      await m.stop();
    }
  },
};
