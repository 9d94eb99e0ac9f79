/**
 * What the mutating and the validating webhook both ask first of a pod, in the order an operator would read it:
 * is it ours to judge (system namespaces, kubelet mirror pods), can it be read within meshgate's bounds
 * (policy/limits.ts), does it try to opt out, are its mesh containers real, does anything else in it bypass or
 * rewrite the redirect, and does it exempt more than a pod may. Pure: (pod, requester, compiled config) → skip |
 * deny | the pod's mesh containers for the next step.
 */
import type { Compiled } from '../config/compile.ts';
import { INJECT_LABEL, MIRROR_ANNOTATION } from '../contract/names.ts';
import type { ReasonCode } from '../contract/reasons.ts';
import { CONTAINER_LISTS, type Container, type Pod } from '../contract/pod.ts';
import { judgeSettings } from './exclusions.ts';
import { describeFound, identifyPod, type PodMesh } from './identify.ts';
import { MAX_NODE_SELECTOR_TERMS, nodeSelectorTermCount, tooLargeToRead } from './limits.ts';
import { podConfigProblem } from './judge/index.ts';
import { podConfinementProblem } from './judge/confinement.ts';
import { probeSysctlProblem } from './sysctls.ts';
import { sharedVolumeRule, startedBeforeProxyRule } from './mesh-volumes.ts';
import { escalationRule, type Exempt, networkRewriteRule, proxyIdentityRule } from './rules.ts';
import type { CapabilityReading } from '../pod/capabilities.ts';

export interface PodInput {
  pod: Pod;
  /** The request's namespace. */
  namespace: string;
  /** request.userInfo.username; undefined offline (CLI). Only a node's kubelet creates mirror pods. */
  requester?: string;
  /**
   * The namespace's labels from the webhook's namespace cache; undefined when unknown (not synced yet, offline).
   * Only Istio's ambient enrolment reads them (src/policy/ambient/enrolment.ts).
   */
  namespaceLabels?: Readonly<Record<string, string>>;
  /**
   * The pod exists already (an UPDATE is judged): what the mesh itself writes on running pods is expected then
   * (istio-cni's ambient.istio.io/redirection, src/policy/ambient/refusals.ts).
   */
  existing?: boolean;
}

export type Screened =
  | { kind: 'skip'; reason: ReasonCode }
  | { kind: 'deny'; reason: ReasonCode; message: string }
  /** warnings: what the pod is allowed although it breaks a rule (a namespace listed as not able to comply yet). */
  | { kind: 'guard'; mesh: PodMesh; warnings: string[] };

function optOut(pod: Pod, cfg: Compiled): string | undefined {
  if (pod.metadata?.labels?.[INJECT_LABEL] === 'false') return `label ${INJECT_LABEL}=false`;
  return cfg.profile.optOut(pod);
}

/** What each of the mesh's redirect opt-outs means for the pod's traffic, for the message. */
const REDIRECTS_NOTHING: Readonly<Record<'proxyless_grpc' | 'interception_none', string>> = {
  proxyless_grpc: "Istio's proxyless gRPC runs its agent without Envoy and redirects none of the pod's traffic",
  interception_none: "with interception mode NONE no rule sends the pod's traffic to the proxy",
};

/** `reading`: how the runtime on the pod's node reads capability names (escalation.ts podCapabilityReading). */
export function screen(input: PodInput, cfg: Compiled, reading: CapabilityReading = 'strictest'): Screened {
  const { pod, namespace } = input;
  const c = cfg.config;
  if (c.systemNamespaces.includes(namespace)) return { kind: 'skip', reason: 'system_namespace' };
  if (namespace === c.meshNamespace) return { kind: 'skip', reason: 'mesh_namespace' };
  // The annotation alone proves nothing (anyone can write it): a mirror pod is one its own node's kubelet creates.
  const node = pod.spec.nodeName;
  if (
    pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined &&
    node &&
    input.requester === `system:node:${node}`
  ) {
    return { kind: 'skip', reason: 'mirror_pod' };
  }
  // Before anything reads the annotations and mesh containers (the opt-out switch is one of them).
  const tooLarge = tooLargeToRead(pod, cfg);
  if (tooLarge) return { kind: 'deny', reason: 'too_large', message: tooLarge };
  // A gateway of the mesh opts out of injection on purpose (istiod renders its proxy itself) and may use the host
  // network: it is the proxy, so neither matters — as long as the proxy is real (identify, below) and alone.
  const gateway = cfg.profile.gateway?.(pod);
  if (gateway && !gateway.alone)
    return {
      kind: 'deny',
      reason: 'gateway_shared',
      message:
        `the pod runs the proxy as a ${gateway.kind} beside other containers ` +
        `(${describeOthers(pod)}), which nothing would redirect; a ${gateway.kind} pod runs the proxy alone`,
    };
  const off = gateway ? undefined : optOut(pod, cfg);
  if (off) {
    return c.injection.allowPodOptOut
      ? { kind: 'skip', reason: 'pod_opted_out' }
      : {
          kind: 'deny',
          reason: 'opt_out_refused',
          message:
            `the pod sets ${off}, but pods in this namespace must run in the mesh ` +
            '(injection.allowPodOptOut is false)',
        };
  }
  const noRedirect = gateway ? undefined : cfg.profile.redirectOptOut?.(pod);
  if (noRedirect) {
    return c.injection.allowPodOptOut
      ? { kind: 'skip', reason: `${noRedirect.code}_allowed` }
      : {
          kind: 'deny',
          reason: noRedirect.code,
          message:
            `the pod sets ${noRedirect.what}: ${REDIRECTS_NOTHING[noRedirect.code]}, an opt-out pods in this ` +
            'namespace may not take (injection.allowPodOptOut is false)',
        };
  }
  if (pod.spec.hostNetwork && !gateway) {
    return c.injection.allowPodOptOut
      ? { kind: 'skip', reason: 'host_network_allowed' }
      : {
          kind: 'deny',
          reason: 'host_network',
          message: "hostNetwork: true shares the node's network, where no proxy can redirect the pod's traffic",
        };
  }
  const terms = nodeSelectorTermCount(pod.spec);
  if (terms > MAX_NODE_SELECTOR_TERMS) {
    return {
      kind: 'deny',
      reason: 'too_large',
      message:
        `the pod has ${terms} required node-selector terms; ` +
        `meshgate adds its node requirement to each and handles at most ${MAX_NODE_SELECTOR_TERMS}`,
    };
  }
  const mesh = identifyPod(pod, cfg);
  const impostor = mesh.impostors[0];
  if (impostor) {
    return {
      kind: 'deny',
      reason: 'impostor_container',
      message: `${describeFound(impostor)} is not the real one: ${impostor.problem}`,
    };
  }
  const config = podConfigProblem(pod, cfg);
  if (config) return { kind: 'deny', reason: 'proxy_config_refused', message: config };
  const unconfined = podConfinementProblem(pod, meshContainers(mesh));
  if (unconfined) return { kind: 'deny', reason: 'mesh_unconfined', message: unconfined };
  const sysctl = probeSysctlProblem(pod, cfg);
  if (sysctl) return { kind: 'deny', reason: 'probe_sysctl', message: sysctl };
  if (gateway) {
    if (!mesh.proxy)
      return {
        kind: 'deny',
        reason: 'impostor_container',
        message: `the pod runs a ${gateway.kind}, but its proxy is not the mesh's (${describeOthers(pod)})`,
      };
    return { kind: 'skip', reason: 'mesh_gateway' };
  }
  const annotations = cfg.profile.annotationSettings(pod.metadata?.annotations ?? {});
  const exempt = exemptIdentity(cfg, [...annotations.exemptGids, ...(mesh.init?.settings.exemptGids ?? [])]);
  if ('message' in exempt) return { kind: 'deny', reason: 'redirect_narrowed', message: exempt.message };
  const rule = proxyIdentityRule(pod, mesh, exempt) ?? networkRewriteRule(mesh);
  if (rule) return { kind: 'deny', ...rule };
  const shared = sharedVolumeRule(mesh, cfg) ?? startedBeforeProxyRule(pod, mesh);
  if (shared) return { kind: 'deny', ...shared };
  const escalation = escalationRule(pod, namespace, mesh, cfg, exempt, reading);
  if (escalation && 'verdict' in escalation) return { kind: 'deny', ...escalation.verdict };
  const warnings = escalation ? [escalation.warning] : [];
  const fromAnnotations = judgeSettings(annotations, cfg, "the pod's annotations");
  if (fromAnnotations) return { kind: 'deny', ...fromAnnotations };
  if (mesh.init) {
    const fromInit = judgeSettings(mesh.init.settings, cfg, `init container ${mesh.init.container.name}`);
    if (fromInit) return { kind: 'deny', ...fromInit };
  }
  return { kind: 'guard', mesh, warnings };
}

/** The mesh's containers identified in the pod (the proxy, the init container, the validator). */
function meshContainers(mesh: PodMesh): Container[] {
  const out: Container[] = [];
  for (const f of [mesh.proxy, mesh.init, mesh.validator]) if (f) out.push(f.container);
  return out;
}

/** The pod's containers by name (ephemeral ones marked), for a message. */
function describeOthers(pod: Pod): string {
  const names = CONTAINER_LISTS.flatMap((list) =>
    (pod.spec[list] ?? []).map((c) => (list === 'ephemeralContainers' ? `${c.name} (ephemeral)` : c.name)),
  );
  return names.length ? `containers ${names.join(', ')}` : 'no containers';
}

/**
 * The identity this pod's redirect exempts: the configured proxy UID and GID, and a GID the pod's own settings add
 * (Linkerd's `--proxy-gid`, `config.linkerd.io/proxy-gid`). One exempt GID at most: a second one, or one beside the
 * configured proxy GID, is an exemption of another group's traffic.
 */
function exemptIdentity(cfg: Compiled, podGids: readonly number[]): Exempt | { message: string } {
  const { proxyUid, proxyGid } = cfg.identity;
  const gids = [...new Set(proxyGid === undefined ? podGids : [proxyGid, ...podGids])];
  if (gids.length > 1)
    return {
      message: `the pod's redirect exempts the traffic of GIDs ${gids.join(' and ')}; only the proxy's group may be exempt`,
    };
  return { proxyUid, proxyGid: gids[0] };
}
