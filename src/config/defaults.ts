import type { MeshgateConfig } from './types.ts';

/**
 * The embedded default configuration. Images are placeholders an operator overrides (the Helm chart does);
 * ports and UIDs follow Istio's well-known values so existing redirect rules and CNI plugins line up.
 */
export const defaultConfig: MeshgateConfig = {
  meshNamespace: 'meshgate',
  systemNamespaces: ['kube-system', 'kube-public', 'kube-node-lease'],
  injection: {
    enabled: true,
    nativeSidecar: 'auto',
    podOptInNamespaceLabels: null,
    recognisedInitContainers: ['istio-init', 'linkerd-init'],
    recognisedProxyContainers: ['istio-proxy', 'linkerd-proxy'],
    recognisedValidatorContainers: ['istio-validation', 'linkerd-network-validator'],
  },
  redirect: {
    mode: 'auto',
    onUnverifiedNode: 'reject',
  },
  proxy: {
    name: 'meshgate-proxy',
    image: 'ghcr.io/meshgate/proxy:0.1.0',
    args: ['proxy', '--inbound-port=15006', '--outbound-port=15001', '--admin-port=15000'],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ],
    ports: [{ name: 'mesh-admin', containerPort: 15000, protocol: 'TCP' }],
    resources: {
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '2', memory: '1Gi' },
    },
    uid: 1337,
    outboundPort: 15001,
    inboundPort: 15006,
    volumeMounts: [{ name: 'meshgate-proxy-data', mountPath: '/var/lib/meshgate' }],
  },
  init: {
    name: 'meshgate-init',
    image: 'ghcr.io/meshgate/proxy-init:0.1.0',
    args: ['redirect'],
  },
  validator: {
    name: 'meshgate-validate',
    image: 'ghcr.io/meshgate/meshgate:0.1.0',
    command: ['/nodejs/bin/node', '/app/bin/meshgate.js', 'validate-redirect'],
    uid: 1338,
    probeAddress: '192.0.2.1:80',
    timeoutSeconds: 5,
  },
  volumes: [{ name: 'meshgate-proxy-data', emptyDir: {} }],
};
