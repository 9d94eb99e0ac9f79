/**
 * What meshgate must know about a service mesh to guard it: the names, ports and identity of its containers, the
 * images they come from, the CNI plugin that redirects on verified nodes, which annotations and arguments steer
 * the redirect, and how to tell its real containers from look-alikes. One profile per mesh (src/mesh/istio.ts,
 * linkerd.ts, custom.ts); the rest of meshgate asks the profile and never hard-codes a mesh.
 */
import type { Learned } from './learn.ts';
import type { Container, Pod } from '../contract/pod.ts';
import { parseCidrList, parsePortRanges, type Parsed, type PortRange } from '../util/values.ts';
import type { PatchOp } from '../contract/patch.ts';

export type MeshName = 'istio' | 'linkerd' | 'custom';
export const MESH_NAMES: readonly MeshName[] = ['istio', 'linkerd', 'custom'];

export type Role = 'proxy' | 'init' | 'validator';

/** What a pod asks the redirect to leave out, wherever it says so (annotations, the init container's arguments). */
export interface RedirectSettings {
  outboundCidrs: string[];
  outboundPorts: PortRange[];
  inboundPorts: PortRange[];
  /** Settings that switch redirection off or narrow it below "all traffic", each a sentence naming where. */
  narrowing: string[];
  /** Values that do not parse, each a sentence naming where. */
  invalid: string[];
  /** Values refused unread for their size (util/values.ts MAX_LIST_ENTRIES), each a sentence naming where. */
  tooLarge: string[];
  /**
   * GIDs the pod's redirect exempts besides the configured proxy identity (Linkerd's `--proxy-gid` and
   * `config.linkerd.io/proxy-gid`): no other container may run as them (src/policy/screen.ts).
   */
  exemptGids: number[];
}

export function emptySettings(): RedirectSettings {
  return {
    outboundCidrs: [],
    outboundPorts: [],
    inboundPorts: [],
    narrowing: [],
    invalid: [],
    tooLarge: [],
    exemptGids: [],
  };
}

/** Records why a value at `where` could not be read: too large to read, or not what it should be. */
function unread(s: RedirectSettings, where: string, p: Extract<Parsed<unknown>, { ok: false }>): void {
  (p.tooLarge ? s.tooLarge : s.invalid).push(`${where}: ${p.error}`);
}

/** Adds the CIDRs of a comma-separated list (absent: nothing) to the settings, or why they cannot be read. */
export function addCidrs(s: RedirectSettings, where: string, raw: string | undefined): void {
  if (raw === undefined) return;
  const p = parseCidrList(raw);
  if (p.ok) s.outboundCidrs.push(...p.value);
  else unread(s, where, p);
}

/** Adds the ports and port ranges of a comma-separated list (absent: nothing), or why they cannot be read. */
export function addPortRanges(
  s: RedirectSettings,
  where: string,
  raw: string | undefined,
  into: 'outboundPorts' | 'inboundPorts',
): void {
  if (raw === undefined) return;
  const p = parsePortRanges(raw);
  if (p.ok) s[into].push(...p.value);
  else unread(s, where, p);
}

/** The mesh facts a judge needs from the configuration (a narrow view, so profiles do not depend on config). */
export interface MeshIdentity {
  proxyUid: number;
  /** The proxy's GID when the mesh's rules exempt one (Istio); undefined when only the UID is exempt (Linkerd). */
  proxyGid?: number;
  outboundPort: number;
  inboundPort: number;
  images: { proxy: readonly string[]; init: readonly string[]; validator: readonly string[] };
}

/**
 * All a mesh container's judgement may read of the pod around it (src/policy/identify.ts builds it per container):
 * the container itself is judged whole, and nothing else of the pod is within its reach. That is what lets a verdict
 * be reused for an identical container in an identical view (src/policy/verdict-cache.ts): the cache key is computed
 * from the container and these fields, so a check that wanted more of the pod would have to add it here, and so to
 * the key.
 */
export interface PodView {
  /** The pod's volumes that the container mounts, by name: a mount is only as trustworthy as the volume behind it. */
  readonly volumes: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /**
   * `spec.serviceAccountName` as the pod wrote it (Istio's istio.<serviceAccount> mTLS Secret; unset: the default
   * one). A string whenever the apiserver sent the pod.
   */
  readonly serviceAccountName: unknown;
  /** The mesh's gateway the pod runs (MeshProfile.gateway); undefined for every other pod. */
  readonly gateway: { readonly kind: string; readonly alone: boolean } | undefined;
  /** Whether the container is the pod's first container (`spec.containers[0]`): where a lone gateway's proxy runs. */
  readonly first: boolean;
  /**
   * The capabilities of the pod's first container that is not the proxy, as it wrote them: Linkerd's injector copies
   * them into linkerd-init (src/policy/judge/linkerd.ts).
   */
  readonly appCapabilities: unknown;
}

/**
 * A problem, as one sentence (or, from a container contract's field check, the words completing "its <field> …");
 * undefined when there is none: the container is what it claims to be, the value is allowed.
 */
export type Problem = string | undefined;

export interface MeshProfile {
  readonly name: MeshName;
  readonly title: string;
  /**
   * true: the mesh's own injector adds the proxy and its privileged init container, and meshgate adjusts what
   * it injected (companion). false: meshgate injects from its own templates (custom).
   */
  readonly companion: boolean;
  /** The names the mesh gives its proxy, privileged init container and CNI-mode validation container. */
  readonly names: Readonly<Record<Role, string>>;
  /**
   * Every pod annotation the profile reads, so their values are bounded in length before any is read
   * (policy/limits.ts tooLargeToRead).
   */
  readonly annotations: readonly string[];
  /** Companion profiles: the ConfigMaps where the installed mesh says what it injects (learn.ts). */
  readonly learnFrom?: {
    configMap(name: string): boolean;
    /** How the ConfigMap's key `values` is written. */
    format: 'json' | 'yaml';
    images(values: unknown): Learned;
  };
  /** The image a pod's proxy container names for the mesh's injector to fill in (Istio's `auto`). */
  readonly placeholderImage?: string;
  /** Pod-level switches with which the mesh lets a pod opt out; the sentence names the one that is set. */
  optOut(pod: Pod): string | undefined;
  /**
   * Ways the mesh runs a pod's proxy without redirecting its traffic, each an opt-out with a code of its own (Istio's
   * proxyless gRPC, interception mode NONE); `what` names the setting. injection.allowPodOptOut decides, as for
   * every opt-out (src/policy/screen.ts).
   */
  redirectOptOut?(pod: Pod): { code: 'proxyless_grpc' | 'interception_none'; what: string } | undefined;
  /**
   * A gateway of the mesh (its proxy as the pod's workload: Istio's ingress, egress and east-west gateways, waypoints):
   * `alone` when the proxy is the pod's only container, as the mesh deploys them — such a pod needs no redirect, it
   * is the proxy. Undefined: no container runs the proxy as a gateway.
   */
  gateway?(pod: Pod): { kind: string; alone: boolean } | undefined;
  /** What the pod's annotations (read by the mesh's injector and CNI plugin) ask the redirect to leave out. */
  annotationSettings(annotations: Readonly<Record<string, string>>): RedirectSettings;
  /** The mesh's own proxy, judged by what it is (image, arguments, identity); companion profiles only. */
  judgeProxy(c: Container, pod: PodView, id: MeshIdentity): Problem;
  /** The mesh's own privileged init container; on success, what its arguments leave out of the redirect. */
  judgeInit(c: Container, id: MeshIdentity): { problem: string } | { settings: RedirectSettings };
  /** The mesh's own CNI-mode validation container (a real check of the redirect, not a look-alike). */
  judgeValidator(c: Container, pod: PodView, id: MeshIdentity): Problem;
  /** Why the mesh's CNI plugin would not redirect this pod (it keys on names and annotations), if it would not. */
  cniSkips(pod: Pod): Problem;
  /** Ops keeping the mesh's own record of what it injected truthful after meshgate replaced `from` with `to`. */
  statusOps(pod: Pod, from: string, to: string): readonly PatchOp[];
}
