// Fake nodes run by kwok, and waits on pods scheduled to them.
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { KWOK_NODE_ANNOTATION } from './components.ts';
import { waitFor, type WaitOptions } from './wait.ts';

export interface NodeOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Reported as status.nodeInfo.kubeletVersion (kwok keeps it). Default: kwok's own "kwok-v0.8.0". */
  kubeletVersion?: string;
  /** Reported as status.nodeInfo.containerRuntimeVersion (e.g. "cri-o://1.30.2"). Default: empty. */
  containerRuntimeVersion?: string;
  /** Extra taints. By default fake nodes take ordinary pods (no kwok taint). */
  taints?: { key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }[];
  /** Wait until kwok reports Ready and the not-ready taint is gone (default true). */
  waitReady?: boolean;
}

/** The taint the TaintNodesByCondition admission plugin puts on every new node until it reports Ready. */
const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

/** A kwok-managed Node manifest; capacity is generous (32 CPUs, 256 GiB, 110 pods) so tests never run out. */
export function kwokNodeManifest(name: string, opts: NodeOptions = {}): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0', ...opts.annotations },
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': name,
        type: 'kwok',
        ...opts.labels,
      },
    },
    spec: { taints: opts.taints?.length ? opts.taints : undefined },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
      nodeInfo: {
        architecture: 'amd64',
        operatingSystem: 'linux',
        kubeletVersion: opts.kubeletVersion ?? '',
        kubeProxyVersion: '',
        bootID: '',
        containerRuntimeVersion: opts.containerRuntimeVersion ?? '',
        kernelVersion: '',
        machineID: '',
        osImage: '',
        systemUUID: '',
      },
    },
  };
}

/**
 * Creates a kwok node and (by default) waits until it is Ready and schedulable. The not-ready taint is removed by
 * the controller-manager's node lifecycle controller; without a controller-manager we remove it ourselves.
 */
export async function createKwokNode(
  kc: KubeConfig,
  name: string,
  opts: NodeOptions & { controllerManager: boolean; describe?: () => string },
): Promise<V1Node> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNode({ body: kwokNodeManifest(name, opts) });
  if (opts.waitReady === false) return core.readNode({ name });
  const waitOpts: WaitOptions = { timeoutMs: 60_000, describe: opts.describe };
  await waitFor(
    `node ${name} to become Ready (kwok)`,
    async () => {
      const n = await core.readNode({ name });
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    },
    waitOpts,
  );
  if (!opts.controllerManager) {
    const n = await core.readNode({ name });
    const taints = (n.spec?.taints ?? []).filter((t) => t.key !== NOT_READY_TAINT);
    await core.patchNode(
      { name, body: { spec: { taints } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
  return waitFor(
    `node ${name} to lose the ${NOT_READY_TAINT} taint`,
    async () => {
      const n = await core.readNode({ name });
      return (n.spec?.taints ?? []).some((t) => t.key === NOT_READY_TAINT) ? false : n;
    },
    waitOpts,
  );
}

/**
 * Waits until `count` pods matching `labelSelector` in `namespace` are Running (and returns them).
 * The timeout message lists each pod's phase, node and the latest scheduling/other condition message.
 */
export async function waitForPodsRunning(
  kc: KubeConfig,
  namespace: string,
  labelSelector: string,
  count: number,
  opts: WaitOptions = {},
): Promise<V1Pod[]> {
  const core = kc.makeApiClient(CoreV1Api);
  let seen: V1Pod[] = [];
  return waitFor(
    `${count} Running pod(s) matching "${labelSelector}" in ${namespace}`,
    async () => {
      seen = (await core.listNamespacedPod({ namespace, labelSelector })).items;
      const running = seen.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
      return running.length >= count ? running : false;
    },
    {
      timeoutMs: 60_000,
      ...opts,
      describe: () => [describePods(seen), opts.describe?.() ?? ''].join('\n'),
    },
  );
}

/** One line per pod: name, phase, node and any non-True condition's message. */
export function describePods(pods: V1Pod[]): string {
  if (pods.length === 0) return 'no pods matched';
  return pods
    .map((p) => {
      const conds = (p.status?.conditions ?? [])
        .filter((c) => c.status !== 'True')
        .map((c) => `${c.type}=${c.status} ${c.reason ?? ''} ${c.message ?? ''}`.trim());
      return `pod ${p.metadata?.name}: ${p.status?.phase} on ${p.spec?.nodeName ?? '(unscheduled)'} ${conds.join('; ')}`;
    })
    .join('\n');
}
