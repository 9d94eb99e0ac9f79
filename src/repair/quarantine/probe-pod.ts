/**
 * The probe pod that must pass before a withdrawn node is given back: the smallest pod the mesh's CNI plugin acts on
 * — its proxy container (a stand-in: the plugin keys on names, not on what runs) and, for Istio, the
 * sidecar.istio.io/status annotation — with meshgate's own validator as its init container. The validator passing
 * on that node is the proof that the node's runtime really runs the plugin now. Pinned to the node by
 * spec.nodeName (no scheduler, no binding, so a withdrawn node is reachable), in meshgate's namespace, which
 * meshgate's webhooks never review. No service-account token, no volumes, restricted security context: the chart's
 * probe policy (repair-probe-policy.yaml) lets the repair controller create nothing more. Pure.
 */
import { createHash } from 'node:crypto';
import type { Compiled } from '../../config/compile.ts';
import { ISTIO_STATUS } from '../../mesh/istio.ts';
import { UNVERIFIED_TAINT } from '../../contract/node.ts';
import type { Container, Pod } from '../../contract/pod.ts';
import { failureReason, provesNotRedirected, type ValidatorWatch } from '../failed/decide.ts';
import { DNS_LABEL } from '../../util/names.ts';

export const PROBE_LABEL = 'meshgate.io/probe';
export const PROBE_NODE_ANNOTATION = 'meshgate.io/probe-node';

export interface ProbeTemplate {
  namespace: string;
  /** The validator container meshgate injects (config.validator), its image possibly overridden. */
  validator: Container;
  /**
   * The proxy stand-in's image. Undefined: the validator's image, running `<validator command[0]> -e
   * process.exit(0)` (meshgate's image runs Node.js): it only has to exist for the CNI plugin to see.
   */
  proxyImage?: string;
  proxyName: string;
  proxyUid: number;
  proxyGid: number;
  /** Istio's CNI plugin acts only on pods with its status annotation and `proxy sidecar` arguments. */
  istio: boolean;
  /** The kubelet kills a probe still running after this (its validator has its own, shorter timeout). */
  activeDeadlineSeconds: number;
}

/** A pod name (at most 63 characters: it is also the pod's hostname) unique per node. */
export function probeName(node: string): string {
  const full = `meshgate-probe-${node}`;
  if (full.length <= 63 && DNS_LABEL.test(full)) return full;
  const hash = createHash('sha256').update(node).digest('hex').slice(0, 10);
  const stem = node
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 36)
    .replace(/-+$/, '');
  return `meshgate-probe-${stem}-${hash}`;
}

export function probeTemplate(
  cfg: Compiled,
  o: { namespace: string; validatorImage?: string; proxyImage?: string; activeDeadlineSeconds: number },
): ProbeTemplate {
  const c = cfg.config;
  const validator = structuredClone(cfg.validator) as Container;
  if (o.validatorImage) validator.image = o.validatorImage;
  return {
    namespace: o.namespace,
    validator,
    proxyImage: o.proxyImage,
    proxyName: cfg.names.proxy,
    proxyUid: c.proxy.uid,
    proxyGid: c.proxy.gid ?? c.proxy.uid,
    istio: c.mesh === 'istio',
    activeDeadlineSeconds: o.activeDeadlineSeconds,
  };
}

export function buildProbePod(t: ProbeTemplate, node: string): Pod {
  const proxy: Container = {
    name: t.proxyName,
    image: t.proxyImage ?? t.validator.image,
    imagePullPolicy: 'IfNotPresent',
    ...(t.proxyImage ? {} : { command: [t.validator.command?.[0] ?? 'node', '-e', 'process.exit(0)'] }),
    args: t.istio ? ['proxy', 'sidecar'] : [],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
    securityContext: {
      runAsUser: t.proxyUid,
      runAsGroup: t.proxyGid,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
  const annotations: Record<string, string> = { [PROBE_NODE_ANNOTATION]: node };
  if (t.istio) {
    annotations[ISTIO_STATUS] = JSON.stringify({
      initContainers: [t.validator.name],
      containers: [t.proxyName],
      volumes: [],
      imagePullSecrets: null,
      revision: 'default',
    });
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: probeName(node),
      namespace: t.namespace,
      labels: {
        [PROBE_LABEL]: 'true',
        'app.kubernetes.io/name': 'meshgate',
        'app.kubernetes.io/component': 'node-probe',
      },
      annotations,
    },
    spec: {
      nodeName: node,
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 1,
      activeDeadlineSeconds: t.activeDeadlineSeconds,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      // A withdrawal may add meshgate's own taint: the probe must still run there.
      tolerations: [{ key: UNVERIFIED_TAINT.key, operator: 'Exists', effect: UNVERIFIED_TAINT.effect }],
      initContainers: [{ ...t.validator, imagePullPolicy: 'IfNotPresent' }],
      containers: [proxy],
    },
  };
}

export type ProbeResult =
  | { state: 'running' }
  | { state: 'passed' }
  | { state: 'failed'; reason: string; detail: string }
  | { state: 'inconclusive'; detail: string };

/** Why a container cannot start: the probe will not run without help, so waiting for it is pointless. */
const STUCK = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

interface ProbeStatus {
  phase?: string;
  reason?: string;
  message?: string;
  initContainerStatuses?: Array<{
    name: string;
    state?: { terminated?: { exitCode?: number; message?: string }; waiting?: { reason?: string; message?: string } };
  }>;
}

/** The probe's verdict from its status (written by its node's kubelet). */
export function judgeProbe(status: ProbeStatus | undefined, validator: ValidatorWatch): ProbeResult {
  const st = status?.initContainerStatuses?.find((s) => s.name === validator.name);
  const t = st?.state?.terminated;
  if (t?.exitCode === 0) return { state: 'passed' };
  if (t?.exitCode !== undefined) {
    const failure = validator.failures.find((f) => f.exitCode === t.exitCode);
    if (failure) {
      const { reason, detail } = failureReason(failure, t.message);
      if (provesNotRedirected(reason)) return { state: 'failed', reason, detail };
      return { state: 'inconclusive', detail: `the validator could not check the redirect (${reason}: ${detail})` };
    }
    return {
      state: 'inconclusive',
      detail:
        `the validator exited ${t.exitCode} (not a redirect failure)` +
        `${t.message ? `: ${t.message.slice(0, 200)}` : ''}`,
    };
  }
  const waiting = st?.state?.waiting;
  if (waiting?.reason && STUCK.has(waiting.reason))
    return {
      state: 'inconclusive',
      detail:
        `the validator cannot start: ${waiting.reason}` +
        `${waiting.message ? ` (${waiting.message.slice(0, 200)})` : ''}`,
    };
  if (status?.phase === 'Failed')
    return {
      state: 'inconclusive',
      detail:
        `the probe pod failed before its validator ran (${status.reason ?? 'no reason'}` +
        `${status.message ? `: ${status.message.slice(0, 200)}` : ''})`,
    };
  return { state: 'running' };
}
