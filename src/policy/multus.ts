/**
 * The pod annotations through which Multus lets a pod choose its networks (multus-cni v4 pkg/k8sclient), judged for
 * CNI-mode pods, whose redirect depends on which networks Multus runs:
 *
 * - `v1.multus-cni.io/default-network` replaces the cluster's default network by one the pod names
 *   (`tryLoadK8sPodDefaultNetwork`): its chain is not the one the node agent verified, so a pod carrying it is not
 *   redirected by the CNI plugin as far as meshgate knows (`mesh_cni_skips`: init mode where the pod has the mesh's
 *   init container, refused where it has not).
 * - `k8s.v1.cni.cncf.io/networks` lists additional networks (`GetPodNetwork`): in the OpenShift model
 *   (`cni.multusNetwork`) the mesh plugin runs only for pods that list its network, so meshgate adds it in CNI mode
 *   (as Istio's injector does with `pilot.cni.provider=multus`) and the validating webhook refuses a CNI-mode pod
 *   without it (`multus_network_missing`), on UPDATE too (the annotation is read again when a sandbox is recreated).
 *
 * The annotation is read as Multus reads it (`parsePodNetworkAnnotation`): JSON when it holds `[`, `{` or `"`
 * (a list of objects decoded by Go: keys matched case-insensitively, the last one winning), else a comma-separated
 * list of `namespace/name@interface`, each part a DNS-1123 label. A value Multus cannot read fails the pod's
 * network at ADD; meshgate refuses it here rather than guess.
 */
import type { Compiled } from '../config/compile.ts';
import { decodeJson, JsonObject } from '../cni/gojson.ts';
import { goFold, keysAsDecoded } from '../cni/netconf.ts';
import type { Pod } from '../contract/pod.ts';
import { DNS_LABEL } from '../util/names.ts';

export const NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';
export const DEFAULT_NETWORK_ANNOTATION = 'v1.multus-cni.io/default-network';

export interface NetworkRef {
  namespace: string;
  name: string;
}

/** Linux's IFNAMSIZ - 1: the longest interface name Multus accepts after "@". */
const MAX_IFNAME = 15;

/** The networks an annotation value selects (namespace defaulted to the pod's), or why Multus would refuse it. */
export function parseNetworks(value: string, podNamespace: string): NetworkRef[] | string {
  if (value === '') return [];
  if (/[[{"]/.test(value)) return parseJsonNetworks(value, podNamespace);
  const out: NetworkRef[] = [];
  for (const raw of value.split(',')) {
    const item = raw.trim();
    const slash = item.split('/');
    if (slash.length > 2) return `"${item}": more than one "/"`;
    const namespace = slash.length === 2 ? slash[0].trim() : '';
    const at = slash[slash.length - 1].split('@');
    if (at.length > 2) return `"${item}": more than one "@"`;
    const name = at[0].trim();
    const ifname = at.length === 2 ? at[1].trim() : '';
    for (const part of [namespace, name])
      if (part !== '' && !DNS_LABEL.test(part)) return `"${part}" is not a lower-case DNS label`;
    if (ifname.length > MAX_IFNAME || /[\s/]/.test(ifname)) return `"${ifname}" is not an interface name`;
    out.push({ namespace: namespace || podNamespace, name });
  }
  return out;
}

function parseJsonNetworks(value: string, podNamespace: string): NetworkRef[] | string {
  const doc = decodeJson(Buffer.from(value, 'utf8'));
  if (!doc.ok) return `not JSON: ${doc.error}`;
  if (doc.value === null) return [];
  if (!Array.isArray(doc.value)) return 'JSON that is not a list';
  const out: NetworkRef[] = [];
  for (const [i, item] of doc.value.entries()) {
    if (!(item instanceof JsonObject)) return `element ${i} is not an object`;
    const ref = { namespace: '', name: '' };
    for (const [key, v] of keysAsDecoded(item, 'document')) {
      const field = goFold(key) === 'NAME' ? 'name' : goFold(key) === 'NAMESPACE' ? 'namespace' : undefined;
      if (!field || v === null) continue;
      if (typeof v !== 'string') return `element ${i}: "${key}" is not a string`;
      ref[field] = v;
    }
    out.push({ namespace: ref.namespace || podNamespace, name: ref.name });
  }
  return out;
}

/** `namespace/name` from the config (validated there: the namespace is required). */
function configured(cfg: Compiled): NetworkRef | undefined {
  const network = cfg.config.cni.multusNetwork;
  if (!network) return undefined;
  const [namespace, name] = network.split('/');
  return { namespace, name };
}

/** Why Multus would not run the verified default network for this pod, if it names its own. */
export function defaultNetworkOverride(pod: Pod): string | undefined {
  const value = pod.metadata?.annotations?.[DEFAULT_NETWORK_ANNOTATION];
  if (value === undefined) return undefined;
  return (
    `the pod replaces Multus' default network (${DEFAULT_NETWORK_ANNOTATION}: ${JSON.stringify(value)}), ` +
    'whose chain no node agent verified'
  );
}

/** In the OpenShift model: why a CNI-mode pod's annotation does not select the mesh's network; else undefined. */
export function networkMissing(pod: Pod, namespace: string, cfg: Compiled): string | undefined {
  const want = configured(cfg);
  if (!want) return undefined;
  const value = pod.metadata?.annotations?.[NETWORKS_ANNOTATION];
  const listed = parseNetworks(value ?? '', namespace);
  if (typeof listed === 'string') return `Multus cannot read ${NETWORKS_ANNOTATION} (${listed})`;
  if (listed.some((n) => n.namespace === want.namespace && n.name === want.name)) return undefined;
  return (
    `the mesh's CNI plugin runs as the Multus network ${want.namespace}/${want.name} (cni.multusNetwork), ` +
    `and the pod's ${NETWORKS_ANNOTATION} does not list it`
  );
}

/**
 * The annotation with the mesh's network added (undefined when it is there already or not configured): appended to
 * the list in its own form, as Istio's appendMultusNetwork does, so the pod's other networks keep their order.
 */
export function withNetwork(pod: Pod, namespace: string, cfg: Compiled): Record<string, string> | undefined {
  const want = configured(cfg);
  if (!want || networkMissing(pod, namespace, cfg) === undefined) return undefined;
  const value = pod.metadata?.annotations?.[NETWORKS_ANNOTATION] ?? '';
  const ref = `${want.namespace}/${want.name}`;
  if (value.trim() === '' || value.trim() === 'null') return { [NETWORKS_ANNOTATION]: ref };
  if (!/[[{"]/.test(value)) return { [NETWORKS_ANNOTATION]: `${value}, ${ref}` };
  const element = JSON.stringify(want);
  const end = value.lastIndexOf(']');
  const listed = parseNetworks(value, namespace);
  const empty = Array.isArray(listed) && listed.length === 0;
  return { [NETWORKS_ANNOTATION]: `${value.slice(0, end)}${empty ? '' : ', '}${element}${value.slice(end)}` };
}

/** For the patch: nothing when the annotation cannot be read (the validating webhook then says why). */
export function networkEntries(pod: Pod, namespace: string, cfg: Compiled): Record<string, string> {
  // Without cni.multusNetwork nothing is added, whatever the annotation holds: it is not read then.
  if (!cfg.config.cni.multusNetwork) return {};
  const value = pod.metadata?.annotations?.[NETWORKS_ANNOTATION];
  if (value !== undefined && typeof parseNetworks(value, namespace) === 'string') return {};
  return withNetwork(pod, namespace, cfg) ?? {};
}
