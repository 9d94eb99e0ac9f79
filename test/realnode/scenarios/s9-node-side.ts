// S9's node side (issue 31 §2, issue 33 §5; docs/security.md "Who can become the proxy"): four apps that admission
// lets through where it judges only what the spec states (apps.privileges: node, the default) and that are, or
// become, the proxy's UID on the node:
//   image-user     the image's USER is the proxy's UID (Istio 1337, Linkerd 2102), no runAsUser
//   setuid-later   root with the runtime's default capabilities, setuid to it ten seconds after start
//   file-cap       runAsUser 1000, default capabilities, its entrypoint carries cap_setuid,cap_setgid+p
//   drop-prefixed  root with `drop: [CAP_SETUID, CAP_SETGID, CAP_NET_RAW]` (containerd drops nothing: issue 33 §5)
//                  and the runtime's default seccomp profile (RuntimeDefault: the NRI plugin's merge into an allowlist)
// Each app connects to the probe address every 100 ms after its switch (become-proxy.c, BECOME_PROXY_STREAM_S), and
// the harness follows its log files on the node (harness/pod-log.ts), so the connections that got past the proxy
// are counted even after the pod is gone. What must happen depends on the runtime:
//   containerd 2.4 (meshgate's NRI plugin): image-user is refused before it runs; the others' set*id to 1337 fails;
//     nothing gets past, the pods keep running;
//   containerd 1.6 (no NRI): every app runs and switches; the node agent's guard kills it, removes its pod and
//     records an Event — the connections before that are the window, measured and counted apart (W).
// Either way an app that got past and was not stopped is meshgate's failure (counted in K).
import type { V1Pod, V1SecurityContext } from '@kubernetes/client-node';
import type { RealCluster } from '../harness/cluster.ts';
import type { BuiltImage } from '../harness/image.ts';
import { baseFiles, BECOME_PROXY_REF, cachedImage, IMAGE_PREFIX } from '../harness/images.ts';
import { APP_CONTAINER } from '../harness/monitor.ts';
import { PodLogTail } from '../harness/pod-log.ts';
import { core, oneLine, sleep } from './common.ts';

export type NodeShape = 'image-user' | 'setuid-later' | 'file-cap' | 'drop-prefixed';
export const NODE_SHAPES: readonly NodeShape[] = ['image-user', 'setuid-later', 'file-cap', 'drop-prefixed'];
/** The image whose USER is the proxy's UID `id`. */
export const userRef = (id: number) => `${IMAGE_PREFIX}/become-proxy:user-${id}`;
/**
 * Seconds each app streams its connections after its switch (become-proxy.c): on containerd 1.6 the guard stops it
 * within ~1.5 s; on 2.4 six seconds of connections that all reach the proxy show the switch was denied.
 */
const STREAM_S = 6;
/** How long the guard's Event may take after its action (one pass and an API call; generous for a loaded host). */
const EVENT_WAIT_MS = 10_000;
/** The delayed switch of issue 31 §2. */
const DELAY_S = 10;

export const nodeDescribe = (id: number): Record<NodeShape, string> => ({
  'image-user': `image USER ${id}, no runAsUser`,
  'setuid-later': `root, default capabilities, setuid(${id}) ${DELAY_S} s after start`,
  'file-cap': 'uid 1000, default capabilities, entrypoint cap_setuid,cap_setgid+p',
  'drop-prefixed': 'root, drop [CAP_SETUID, CAP_SETGID, CAP_NET_RAW], seccomp RuntimeDefault',
});
const SECURITY: Record<NodeShape, V1SecurityContext | undefined> = {
  'image-user': undefined,
  'setuid-later': undefined,
  'file-cap': { runAsUser: 1000, runAsGroup: 1000 },
  'drop-prefixed': {
    runAsUser: 0,
    runAsGroup: 0,
    capabilities: { drop: ['CAP_SETUID', 'CAP_SETGID', 'CAP_NET_RAW'] },
    seccompProfile: { type: 'RuntimeDefault' },
  },
};

/** S9's app with USER `id` (built once, cached like the tier's other images). */
export function userImage(c: RealCluster, id: number): Promise<BuiltImage> {
  const entry = 'usr/local/bin/become-proxy';
  const config = { entrypoint: [`/${entry}`], user: `${id}` };
  return cachedImage(userRef(id), new Map([[entry, c.bins.becomeProxy]]), config, baseFiles);
}

export function nodePod(shape: NodeShape, id: number): V1Pod {
  const env = [
    { name: 'BECOME_PROXY_ID', value: String(id) },
    { name: 'BECOME_PROXY_STREAM_S', value: String(STREAM_S) },
  ];
  if (shape === 'setuid-later') env.push({ name: 'BECOME_PROXY_DELAY_S', value: String(DELAY_S) });
  const image = shape === 'image-user' ? userRef(id) : BECOME_PROXY_REF;
  const sc = SECURITY[shape];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: shape, labels: { app: shape } },
    spec: {
      containers: [
        { name: APP_CONTAINER, image, imagePullPolicy: 'Never', env, ...(sc ? { securityContext: sc } : {}) },
      ],
      terminationGracePeriodSeconds: 2,
    },
  };
}

interface AppLine {
  event?: string;
  attempt?: number;
  uid?: number;
  euid?: number;
  uidAfter?: number;
  setuid?: string;
  dial?: string;
  line?: string;
}

/** What one node-side app did, read from its log, its pod and the Events. */
export interface NodeOutcome {
  shape: NodeShape;
  ran: boolean;
  /** From the app's first line to its last, ms. */
  ranMs: number;
  /** From its switch to the proxy's UID to its last line, ms (undefined: it never switched). */
  windowMs?: number;
  setuid?: string;
  /** Connections (report + streamed attempts) made as the proxy's UID that did not reach the proxy. */
  past: number;
  /** Connections that reached the proxy. */
  reached: number;
  /** Removed by the guard (pod gone), and the Event reasons recorded on it. */
  removed: boolean;
  events: string[];
  /** The kubelet's waiting message for the app, when it never started. */
  waiting?: string;
  /** The app's lines read from the node (every start of its container), and the last one. */
  lines: number;
  last?: string;
}

/** Follows one admitted pod until it is decided (removed, refused, or its app finished streaming) or `deadline`. */
export async function follow(
  c: RealCluster,
  ns: string,
  created: V1Pod,
  deadline: number,
  proxy: { id: number; line: string },
): Promise<NodeOutcome> {
  const shape = created.metadata?.name as NodeShape;
  const uid = created.metadata?.uid ?? '';
  let tail: PodLogTail | undefined;
  let removed = false;
  let waiting: string | undefined;
  const api = core(c);
  while (Date.now() < deadline) {
    let pod: V1Pod | undefined;
    try {
      pod = await api.readNamespacedPod({ name: shape, namespace: ns });
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
      removed = true; // the guard deleted it (grace 0)
    }
    if (pod && pod.metadata?.uid !== uid) removed = true;
    const node = pod?.spec?.nodeName;
    if (!tail && node) tail = new PodLogTail(c.node(node), { namespace: ns, name: shape, uid }, APP_CONTAINER);
    tail?.read();
    const st = pod?.status?.containerStatuses?.find((s) => s.name === APP_CONTAINER)?.state?.waiting;
    if (st?.message) waiting = `${st.reason}: ${st.message}`;
    const lines = tail?.json<AppLine>() ?? [];
    if (removed || lines.some((l) => l.value.event === 'done') || waiting?.includes('[proxy_identity_refused]')) break;
    await sleep(200);
  }
  tail?.stop();
  const lines = tail?.json<AppLine>() ?? [];
  const asProxy = (l: AppLine) => l.uid === proxy.id || l.euid === proxy.id || l.uidAfter === proxy.id;
  const dials = lines.filter((l) => l.value.dial !== undefined);
  const switched = lines.find((l) => asProxy(l.value));
  const report = lines.find((l) => l.value.setuid !== undefined)?.value;
  // The guard records its Event right after it acts (a pass later for a refusal it reads in the pod's status).
  const expected = removed
    ? 'MeshProxyIdentityStopped'
    : waiting?.includes('[proxy_identity_refused]')
      ? 'MeshProxyIdentityRefused'
      : undefined;
  let events: string[] = [];
  for (const until = Date.now() + EVENT_WAIT_MS; ; await sleep(250)) {
    events = (await api.listNamespacedEvent({ namespace: ns })).items
      .filter((e) => e.involvedObject?.uid === uid && e.reason?.startsWith('MeshProxyIdentity'))
      .map((e) => `${e.reason}: ${oneLine(e.message ?? '', 300)}`);
    if (!expected || events.some((e) => e.startsWith(expected)) || Date.now() > until) break;
  }
  return {
    shape,
    ran: lines.length > 0,
    ranMs: lines.length ? lines[lines.length - 1].at - lines[0].at : 0,
    windowMs: switched ? lines[lines.length - 1].at - switched.at : undefined,
    setuid: report?.setuid,
    past: dials.filter((l) => asProxy(l.value) && l.value.line !== proxy.line).length,
    reached: dials.filter((l) => l.value.line === proxy.line).length,
    removed,
    events,
    waiting,
    lines: lines.length,
    last: lines.length ? JSON.stringify(lines[lines.length - 1].value) : undefined,
  };
}
