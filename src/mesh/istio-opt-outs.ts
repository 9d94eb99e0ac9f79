/**
 * Istio's ways of running a pod's proxy without redirecting its traffic, read as istiod 1.27 writes them: opt-outs
 * with codes of their own (src/policy/screen.ts decides them by injection.allowPodOptOut).
 */
import type { Container, Pod } from '../contract/pod.ts';
import { goBool } from './flags.ts';
import type { MeshProfile } from './types.ts';

/** istiod's templates for proxyless gRPC (istio-discovery chart files/grpc-agent.yaml, grpc-simple.yaml). */
const PROXYLESS_TEMPLATES: readonly string[] = ['grpc-agent', 'grpc-simple'];
export const ISTIO_TEMPLATES = 'inject.istio.io/templates';

/** The last value of a variable in the pod's istio-proxy, as the kubelet resolves duplicates. */
function proxyEnv(pod: Pod, name: string): string | undefined {
  const isProxy = (c: Container) => c.name === 'istio-proxy';
  const proxy = pod.spec.initContainers?.find(isProxy) ?? pod.spec.containers.find(isProxy);
  return proxy?.env?.findLast((e) => e.name === name)?.value;
}

/**
 * Istio's ways of running a pod's proxy without redirecting its traffic (both opt-outs the pod or the mesh chooses,
 * decided by injection.allowPodOptOut, src/policy/screen.ts):
 * - proxyless gRPC: the pod asks istiod for a grpc template (`inject.istio.io/templates`, split on commas and trimmed
 *   as pkg/kube/inject selectTemplates reads it); grpc-agent writes an istio-proxy with DISABLE_ENVOY=true and no
 *   init container, the app speaking xDS itself. A proxy with Envoy switched off is the same thing however it came.
 * - interception mode NONE (`sidecar.istio.io/interceptionMode`, or the mesh's defaultConfig, which istiod writes into
 *   the proxy's ISTIO_META_INTERCEPTION_MODE): the template writes no init container; the app must send to the proxy.
 */
export function redirectOptOut(pod: Pod): ReturnType<NonNullable<MeshProfile['redirectOptOut']>> {
  const templates = pod.metadata?.annotations?.[ISTIO_TEMPLATES];
  if (templates?.split(',').some((t) => PROXYLESS_TEMPLATES.includes(t.trim())))
    return { code: 'proxyless_grpc', what: `annotation ${ISTIO_TEMPLATES}=${templates}` };
  const disable = proxyEnv(pod, 'DISABLE_ENVOY');
  if (goBool(disable) === true) return { code: 'proxyless_grpc', what: `istio-proxy's DISABLE_ENVOY=${disable}` };
  const mode = pod.metadata?.annotations?.['sidecar.istio.io/interceptionMode'];
  if (mode === 'NONE') return { code: 'interception_none', what: 'annotation sidecar.istio.io/interceptionMode=NONE' };
  if (mode === undefined && proxyEnv(pod, 'ISTIO_META_INTERCEPTION_MODE') === 'NONE')
    return { code: 'interception_none', what: "istio-proxy's ISTIO_META_INTERCEPTION_MODE=NONE (the mesh's default)" };
  return undefined;
}
