// Hand-written pods for real nodes. Images are the locally imported ones (imagePullPolicy: Never: there is no
// registry), no service-account token (nothing in them talks to the apiserver), short grace periods.
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { MESHGATE_REF, NONROOT_UID, PROXY_REF, PROXY_UID } from './images.ts';

/**
 * A container security context that `apps.privileges: restricted` admits (docs/security.md, "Who can become the
 * proxy"): a known UID and GID, no privilege escalation, no capabilities, so it can neither be nor become the proxy.
 */
export function cannotBecomeProxy(id: number) {
  return {
    runAsUser: id,
    runAsGroup: id,
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
  };
}

/** An idle app container on meshgate's own image (proves that image runs under real runc as its non-root user). */
export function appContainer(name = 'app'): V1Container {
  return {
    name,
    image: MESHGATE_REF,
    imagePullPolicy: 'Never',
    command: ['/nodejs/bin/node', '-e', "process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 3600e3)"],
    securityContext: cannotBecomeProxy(NONROOT_UID),
  };
}

/**
 * The stand-in proxy as Istio's injector shapes it: container `istio-proxy`, args starting `proxy sidecar` (istio-cni
 * skips a pod whose istio-proxy runs anything else), uid/gid 1337 (exempt from redirection), readiness on 15021.
 */
export function istioProxyContainer(): V1Container {
  return {
    name: 'istio-proxy',
    image: PROXY_REF,
    imagePullPolicy: 'Never',
    args: ['proxy', 'sidecar', '--domain', '$(POD_NAMESPACE).svc.cluster.local'],
    env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
    ports: [{ name: 'http-envoy-prom', containerPort: 15090, protocol: 'TCP' }],
    readinessProbe: { httpGet: { path: '/healthz/ready', port: 15021 }, periodSeconds: 2, failureThreshold: 30 },
    securityContext: {
      runAsUser: PROXY_UID,
      runAsGroup: PROXY_UID,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    },
  };
}

/** What Istio's injector writes into sidecar.istio.io/status for a CNI-mode pod (no istio-init). */
export const ISTIO_STATUS_CNI = JSON.stringify({
  initContainers: null,
  containers: ['istio-proxy'],
  volumes: ['istio-envoy'],
  imagePullSecrets: null,
  revision: 'default',
});

function basePod(
  name: string,
  nodeName: string,
  containers: V1Container[],
  annotations: Record<string, string> = {},
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: name, 'meshgate.test/tier': 'realnode' }, annotations },
    spec: {
      nodeName,
      containers,
      automountServiceAccountToken: false,
      // The containers exit on SIGTERM at once; 2 s only bounds a stuck one.
      terminationGracePeriodSeconds: 2,
      enableServiceLinks: false,
    },
  };
}

/** An Istio-shaped pod as Istio's injector would make it in CNI mode: app + istio-proxy, status annotation. */
export function istioShapedPod(name: string, nodeName: string): V1Pod {
  return basePod(name, nodeName, [appContainer(), istioProxyContainer()], {
    'sidecar.istio.io/status': ISTIO_STATUS_CNI,
  });
}

/** A pod no mesh touches. */
export function plainPod(name: string, nodeName: string): V1Pod {
  return basePod(name, nodeName, [appContainer()]);
}
