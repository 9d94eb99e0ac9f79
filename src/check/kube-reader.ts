/**
 * Reads what `meshgate check` judges through the Kubernetes API, read-only, reducing every object to the plain
 * facts of facts.ts (records.ts). "Not found" is `undefined`; other failures as read-errors.ts words them. Lists are
 * paged, and each item is parsed alone as it arrives (raw-list.ts).
 */
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  VersionApi,
  type KubeConfig,
} from '@kubernetes/client-node';
import { core, group } from '../kube/api/paths.ts';
import { listItems } from './raw-list.ts';
import type { LeaseRenewal, VerdictNode } from '../contract/node.ts';
import { leaseNode, NODE_LEASE_LABEL, nodeLeaseName, renewedAt } from '../contract/node.ts';
import {
  agentPod,
  controllerOf,
  daemonSetStatus,
  deploymentStatus,
  endpointCounts,
  namespaceFacts,
  type NamespaceLike,
  podRecord,
  webhookEntry,
  type PodLike,
} from './records.ts';
import { ConnectionError, readFailure } from './read-errors.ts';
import type {
  AgentPod,
  NamespaceFacts,
  Owner,
  PodRecord,
  Read,
  ReadError,
  SecretCerts,
  ServiceEndpoints,
  WebhookConfig,
  WebhookKind,
  WorkloadStatus,
} from './facts.ts';

/** Items per LIST page: few requests; items are parsed one at a time as they arrive (raw-list.ts), never a page whole. */
const PAGE = 500;

export class KubeReader {
  readonly #server: string;
  readonly #admission: AdmissionregistrationV1Api;
  readonly #apps: AppsV1Api;
  readonly #core: CoreV1Api;
  readonly #discovery: DiscoveryV1Api;
  readonly #coordination: CoordinationV1Api;
  readonly #version: VersionApi;
  readonly #kc: KubeConfig;

  constructor(kc: KubeConfig) {
    this.#kc = kc;
    this.#server = kc.getCurrentCluster()?.server ?? 'the apiserver';
    this.#admission = kc.makeApiClient(AdmissionregistrationV1Api);
    this.#apps = kc.makeApiClient(AppsV1Api);
    this.#core = kc.makeApiClient(CoreV1Api);
    this.#discovery = kc.makeApiClient(DiscoveryV1Api);
    this.#coordination = kc.makeApiClient(CoordinationV1Api);
    this.#version = kc.makeApiClient(VersionApi);
  }

  /** `call`, its failure as read-errors.ts words it. */
  async #read<T>(what: string, call: () => Promise<T>): Promise<T | ReadError | undefined> {
    try {
      return await call();
    } catch (err) {
      return readFailure(err, this.#server, what, false);
    }
  }

  /** `call` with the error handling of every read here (for readers of other objects: mesh-reader.ts). */
  read<T>(what: string, call: () => Promise<T>): Promise<T | ReadError | undefined> {
    return this.#read(what, call);
  }

  /** The first call: proves the apiserver answers and accepts the credentials. */
  async serverVersion(): Promise<string> {
    const v = await this.#read('/version', () => this.#version.getCode());
    if (v === undefined || 'error' in v)
      throw new ConnectionError(`the apiserver did not answer /version: ${v?.error ?? '404'}`);
    return v.gitVersion;
  }

  async webhookConfig(kind: WebhookKind, name: string): Promise<Read<WebhookConfig>> {
    const c = await this.#read(`${kind} webhook configuration ${name}`, () =>
      kind === 'mutating'
        ? this.#admission.readMutatingWebhookConfiguration({ name })
        : this.#admission.readValidatingWebhookConfiguration({ name }),
    );
    if (c === undefined || 'error' in c) return c;
    return { kind, name, webhooks: (c.webhooks ?? []).map(webhookEntry) };
  }

  /** The Service and its EndpointSlices' endpoints for the service port `port` (named in the slices by its name). */
  async service(namespace: string, name: string, port: number): Promise<Read<ServiceEndpoints>> {
    const svc = await this.#read(`Service ${namespace}/${name}`, () =>
      this.#core.readNamespacedService({ name, namespace }),
    );
    if (svc === undefined || 'error' in svc) return svc;
    const ports = (svc.spec?.ports ?? []).map((p) => ({ name: p.name, port: p.port }));
    const portName = ports.find((p) => p.port === port)?.name ?? '';
    const slices = await this.#read(`EndpointSlices of ${namespace}/${name}`, () =>
      this.#discovery.listNamespacedEndpointSlice({
        namespace,
        labelSelector: `kubernetes.io/service-name=${name}`,
        limit: PAGE,
      }),
    );
    if (slices === undefined || 'error' in slices) return slices ?? { error: 'EndpointSlices not found' };
    return { namespace, name, ports, ...endpointCounts(slices.items, portName) };
  }

  async secret(namespace: string, name: string): Promise<Read<SecretCerts>> {
    const s = await this.#read(`Secret ${namespace}/${name}`, () =>
      this.#core.readNamespacedSecret({ name, namespace }),
    );
    if (s === undefined || 'error' in s) return s;
    const text = (k: string) => (s.data?.[k] ? Buffer.from(s.data[k], 'base64').toString('utf8') : undefined);
    return { namespace, name, tlsCrt: text('tls.crt'), caCrt: text('ca.crt') };
  }

  async configMapKey(namespace: string, name: string, key: string): Promise<Read<string>> {
    const cm = await this.#read(`ConfigMap ${namespace}/${name}`, () =>
      this.#core.readNamespacedConfigMap({ name, namespace }),
    );
    if (cm === undefined || 'error' in cm) return cm;
    return cm.data?.[key] ?? { error: `ConfigMap ${namespace}/${name} has no key ${key}` };
  }

  /** The DaemonSet's rollout numbers and its pod selector's matchLabels. */
  async daemonSet(
    namespace: string,
    name: string,
  ): Promise<Read<WorkloadStatus & { selector: Record<string, string> }>> {
    const ds = await this.#read(`DaemonSet ${namespace}/${name}`, () =>
      this.#apps.readNamespacedDaemonSet({ name, namespace }),
    );
    if (ds === undefined || 'error' in ds) return ds;
    return { ...daemonSetStatus(namespace, name, ds), selector: ds.spec?.selector.matchLabels ?? {} };
  }

  async deployment(namespace: string, name: string): Promise<Read<WorkloadStatus>> {
    const d = await this.#read(`Deployment ${namespace}/${name}`, () =>
      this.#apps.readNamespacedDeployment({ name, namespace }),
    );
    return d === undefined || 'error' in d ? d : deploymentStatus(namespace, name, d);
  }

  async agentPods(namespace: string, selector: Record<string, string>): Promise<AgentPod[] | ReadError> {
    const labelSelector = Object.entries(selector)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const out: AgentPod[] = [];
    const err = await this.#pages(
      `pods of ${namespace} (${labelSelector})`,
      core('pods', { namespace }),
      { labelSelector },
      (p: Parameters<typeof agentPod>[0]) => out.push(agentPod(p)),
    );
    return err ?? out;
  }

  /** One Node, as plain JSON (the client's models hold Dates where the API has strings). */
  async node(name: string): Promise<Read<VerdictNode>> {
    const n = await this.#read(`Node ${name}`, () => this.#core.readNode({ name }));
    if (n === undefined || 'error' in n) return n;
    return JSON.parse(JSON.stringify(n)) as VerdictNode;
  }

  /** When the agent of `node` last renewed its Lease in meshgate's namespace (ms since the epoch), if it has one. */
  async nodeLease(namespace: string, node: string): Promise<number | ReadError | undefined> {
    const name = nodeLeaseName(node);
    if (name === undefined) return undefined;
    const l = await this.#read(`Lease ${namespace}/${name}`, () =>
      this.#coordination.readNamespacedLease({ name, namespace }),
    );
    if (l === undefined || 'error' in l) return l;
    const at = new Date(l.spec?.renewTime ?? Number.NaN).getTime(); // the client's model holds a Date
    return Number.isNaN(at) ? undefined : at;
  }

  nodes(each: (n: VerdictNode) => void): Promise<ReadError | undefined> {
    return this.#pages('Nodes', core('nodes'), {}, each);
  }

  /** The node agents' Lease renewals in meshgate's namespace (src/contract/node.ts): node → ms since the epoch. */
  async nodeLeases(namespace: string): Promise<Map<string, number> | ReadError> {
    const out = new Map<string, number>();
    const err = await this.#pages(
      `Leases of ${namespace}`,
      group('coordination.k8s.io/v1', 'leases', { namespace }),
      { labelSelector: NODE_LEASE_LABEL },
      (l: LeaseRenewal) => {
        const node = leaseNode(l.metadata?.name);
        const at = renewedAt(l);
        if (node !== undefined && at !== undefined) out.set(node, at);
      },
    );
    return err ?? out;
  }

  async namespaces(): Promise<NamespaceFacts[] | ReadError> {
    const out: NamespaceFacts[] = [];
    const err = await this.#pages('Namespaces', core('namespaces'), {}, (ns: NamespaceLike) =>
      out.push(namespaceFacts(ns)),
    );
    return err ?? out;
  }

  /** The pods of a namespace, page by page; with `labelSelector`, only those the apiserver finds it selects. */
  pods(namespace: string, each: (p: PodRecord) => void, labelSelector?: string): Promise<ReadError | undefined> {
    return this.#pages(
      `pods of ${namespace}${labelSelector ? ` (${labelSelector})` : ''}`,
      core('pods', { namespace }),
      { labelSelector },
      (p: PodLike) => each(podRecord(namespace, p)),
    );
  }

  /** The controller of a ReplicaSet (its Deployment), or undefined for a ReplicaSet of its own. */
  async replicaSetOwner(namespace: string, name: string): Promise<Owner | undefined> {
    const rs = await this.#read(`ReplicaSet ${namespace}/${name}`, () =>
      this.#apps.readNamespacedReplicaSet({ name, namespace }),
    );
    return rs === undefined || 'error' in rs ? undefined : controllerOf(rs.metadata?.ownerReferences);
  }

  /** Every page of a list as plain JSON (raw-list.ts), each item parsed alone, handed to `each` and dropped. */
  async #pages<T>(
    what: string,
    path: string,
    query: Record<string, string | undefined>,
    each: (item: T) => void,
  ): Promise<ReadError | undefined> {
    try {
      await listItems<T>(this.#kc, path, PAGE, query, each);
      return undefined;
    } catch (err) {
      return readFailure(err, this.#server, what, true);
    }
  }
}
