// An in-memory cluster behind UninstallApi (src/uninstall/kube-api.ts): nodes take JSON merge patches and strategic
// `$patch: delete` of a condition, as the apiserver does; writes are recorded, so tests can assert a dry run wrote
// nothing. The real apiserver drives the same code in test/e2e/chart-lifecycle.test.ts.
import { ApiException, type V1Node, type V1ObjectMeta, type V1Pod, type V1Secret } from '@kubernetes/client-node';
import type { UninstallApi } from '../../src/uninstall/kube-api.ts';

// biome-ignore lint/suspicious/noExplicitAny: merge patches are applied to plain JSON
type Json = any;

function mergePatch(target: Json, patch: Json): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = target && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** An error as client-node throws it for an API status. */
export function apiError(code: number, reason: string, message: string): ApiException<string> {
  return new ApiException(code, message, JSON.stringify({ kind: 'Status', reason, message }), {});
}

export interface FakeCluster {
  api: UninstallApi;
  nodes: Map<string, V1Node>;
  pods: V1Pod[];
  secrets: Map<string, V1Secret>;
  leases: Map<string, { metadata: V1ObjectMeta }>;
  workloads: Map<string, { deleting: boolean }>;
  webhookConfigs: string[];
  /** Namespaces' labels, by name. */
  namespaces: Map<string, Record<string, string>>;
  /** PolicyReports, "namespace/name" → its metadata. */
  reports: Map<string, V1ObjectMeta>;
  writes: string[];
  /** Called before each namespace patch: a test can throw (a policy still refusing). */
  beforeNamespacePatch?: (name: string) => void;
  /** Called before each node patch: a test can change the Node (a conflict) or throw (a policy). */
  beforeNodePatch?: (name: string, patch: Json) => void;
}

export function fakeCluster(): FakeCluster {
  const c: FakeCluster = {
    nodes: new Map(),
    pods: [],
    secrets: new Map(),
    leases: new Map(),
    workloads: new Map(),
    webhookConfigs: [],
    namespaces: new Map(),
    reports: new Map(),
    writes: [],
    api: undefined as unknown as UninstallApi,
  };
  const key = (ns: string, name: string) => `${ns}/${name}`;
  c.api = {
    webhookConfigurations: async () => [...c.webhookConfigs],
    workload: async (kind, ns, name) => c.workloads.get(`${kind} ${key(ns, name)}`),
    pods: async (ns) => structuredClone(c.pods.filter((p) => p.metadata?.namespace === ns)),
    unboundPendingPods: async () =>
      structuredClone(c.pods.filter((p) => p.status?.phase === 'Pending' && !p.spec?.nodeName)),
    deletePod: async (pod) => {
      c.writes.push(`delete pod ${key(pod.metadata!.namespace!, pod.metadata!.name!)}`);
      c.pods = c.pods.filter((p) => p.metadata?.uid !== pod.metadata?.uid);
    },
    nodes: async () => structuredClone([...c.nodes.values()]),
    node: async (name) => structuredClone(c.nodes.get(name)),
    patchNode: async (name, patch) => {
      c.beforeNodePatch?.(name, patch);
      const node = c.nodes.get(name)!;
      const rv = (patch as Json).metadata?.resourceVersion;
      if (rv !== undefined && rv !== node.metadata?.resourceVersion)
        throw apiError(409, 'Conflict', 'the object changed');
      const { resourceVersion: _, ...meta } = (patch as Json).metadata ?? {};
      const next = mergePatch(node, { ...patch, metadata: meta });
      next.metadata.resourceVersion = String(Number(node.metadata?.resourceVersion ?? '0') + 1);
      c.nodes.set(name, next);
      c.writes.push(`patch node ${name}`);
    },
    patchNodeStatus: async (name, patch) => {
      const node = c.nodes.get(name)!;
      const drop = ((patch as Json).status.conditions as Array<{ type: string }>).map((x) => x.type);
      node.status = {
        ...node.status,
        conditions: (node.status?.conditions ?? []).filter((x) => !drop.includes(x.type)),
      };
      c.writes.push(`patch node status ${name}`);
    },
    secret: async (ns, name) => structuredClone(c.secrets.get(key(ns, name))),
    deleteSecret: async (ns, name) => {
      c.writes.push(`delete secret ${key(ns, name)}`);
      c.secrets.delete(key(ns, name));
    },
    lease: async (ns, name) => structuredClone(c.leases.get(key(ns, name))),
    deleteLease: async (ns, name) => {
      c.writes.push(`delete lease ${key(ns, name)}`);
      c.leases.delete(key(ns, name));
    },
    labelledNamespaces: async (label) =>
      [...c.namespaces].filter(([, l]) => label in l).map(([name, l]) => ({ name, value: l[label] })),
    removeNamespaceLabel: async (name, label) => {
      c.beforeNamespacePatch?.(name);
      delete c.namespaces.get(name)?.[label];
      c.writes.push(`unlabel namespace ${name} ${label}`);
    },
    countPods: async (label) => c.pods.filter((p) => label in (p.metadata?.labels ?? {})).length,
    policyReports: async (selector) => {
      const [k, v] = selector.split('=');
      return [...c.reports.values()].filter((m) => m.labels?.[k] === v).map((m) => ({ metadata: structuredClone(m) }));
    },
    deletePolicyReport: async (ns, name) => {
      c.writes.push(`delete policyreport ${key(ns, name)}`);
      c.reports.delete(key(ns, name));
    },
  };
  return c;
}
