/** Small builders for decision-core tests. */
import { nodeFactsFromState } from '../../../src/facts/node-state.ts';
import type { Container, Pod } from '../../../src/contract/pod.ts';
import type { PodInput } from '../../../src/policy/screen.ts';
export { testConfig as cfg } from '../../support/config.ts';

export function facts(
  nodes: Record<
    string,
    { verified: boolean; kubeletVersion?: string; containerRuntimeVersion?: string; reason?: string }
  >,
) {
  return nodeFactsFromState({ nodes }, 'test');
}

/** good: verified, bad: not, both with kubelets that run native sidecars. */
export const verified = facts({
  good: { verified: true, kubeletVersion: 'v1.34.1' },
  bad: { verified: false, kubeletVersion: 'v1.34.1' },
});

export function pod(spec: Partial<Pod['spec']> = {}, meta: Pod['metadata'] = { name: 'web', namespace: 'demo' }): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta,
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec },
  };
}

export const input = (p: Pod, namespace = 'demo', requester?: string): PodInput => ({ pod: p, namespace, requester });

/** How the DaemonSet controller pins a pod to one node. */
export function pinnedTo(node: string): Partial<Pod['spec']> {
  return {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
        },
      },
    },
  };
}

const ISTIO_IMAGE = 'docker.io/istio/proxyv2:1.27.0';
/** The capture flags istiod 1.27's template gives both istio-init and istio-validation. */
const ISTIO_IPTABLES_ARGS = [
  'istio-iptables',
  '-p',
  '15001',
  '-z',
  '15006',
  '-u',
  '1337',
  '-m',
  'REDIRECT',
  '-i',
  '*',
  '-x',
  '',
  '-b',
  '*',
  '-d',
  '15090,15021,15020',
];

/** Istio's containers as istiod 1.27's injection template renders them (sidecar, REDIRECT, no CNI). */
export const istio = {
  init: (over: Partial<Container> = {}): Container => ({
    name: 'istio-init',
    image: ISTIO_IMAGE,
    args: [...ISTIO_IPTABLES_ARGS, '--log_output_level=default:info'],
    securityContext: {
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
      readOnlyRootFilesystem: false,
      runAsGroup: 0,
      runAsNonRoot: false,
      runAsUser: 0,
    },
    ...over,
  }),
  validation: (over: Partial<Container> = {}): Container => ({
    name: 'istio-validation',
    image: ISTIO_IMAGE,
    args: [...ISTIO_IPTABLES_ARGS, '--run-validation', '--skip-rule-apply'],
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsGroup: 1337,
      runAsNonRoot: true,
      runAsUser: 1337,
    },
    ...over,
  }),
  proxy: (over: Partial<Container> = {}): Container => ({
    name: 'istio-proxy',
    image: ISTIO_IMAGE,
    args: ['proxy', 'sidecar', '--domain', '$(POD_NAMESPACE).svc.cluster.local'],
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsGroup: 1337,
      runAsNonRoot: true,
      runAsUser: 1337,
    },
    ...over,
  }),
  status:
    '{"initContainers":["istio-init"],"containers":["istio-proxy"],"volumes":["istio-envoy"],"imagePullSecrets":null,"revision":"default"}',
};

/** A pod as Istio's injector leaves it: istio-init, the proxy as a regular container, the status annotation. */
export function istioPod(spec: Partial<Pod['spec']> = {}, annotations: Record<string, string> = {}): Pod {
  return pod(
    { initContainers: [istio.init()], containers: [{ name: 'app', image: 'nginx' }, istio.proxy()], ...spec },
    { name: 'web', namespace: 'demo', annotations: { 'sidecar.istio.io/status': istio.status, ...annotations } },
  );
}

const LINKERD_IMAGE = 'cr.l5d.io/linkerd/proxy:edge-25.10.1';

/** Linkerd's containers as its proxy injector renders them (proxy-init in the proxy image, no CNI). */
export const linkerd = {
  init: (over: Partial<Container> = {}): Container => ({
    name: 'linkerd-init',
    image: LINKERD_IMAGE,
    command: ['/usr/lib/linkerd/linkerd2-proxy-init'],
    args: [
      '--firewall-bin-path',
      'iptables-nft',
      '--firewall-save-bin-path',
      'iptables-nft-save',
      '--ipv6=false',
      '--incoming-proxy-port',
      '4143',
      '--outgoing-proxy-port',
      '4140',
      '--proxy-uid',
      '2102',
      '--inbound-ports-to-ignore',
      '4190,4191,4567,4568',
      '--outbound-ports-to-ignore',
      '4567,4568',
    ],
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { add: ['NET_ADMIN', 'NET_RAW'] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsGroup: 65534,
      runAsNonRoot: true,
      runAsUser: 65534,
    },
    ...over,
  }),
  proxy: (over: Partial<Container> = {}): Container => ({
    name: 'linkerd-proxy',
    image: LINKERD_IMAGE,
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 2102,
    },
    ...over,
  }),
};

export function linkerdPod(spec: Partial<Pod['spec']> = {}, annotations: Record<string, string> = {}): Pod {
  return pod(
    { initContainers: [linkerd.init()], containers: [{ name: 'app', image: 'nginx' }, linkerd.proxy()], ...spec },
    { name: 'web', namespace: 'demo', annotations },
  );
}
