/**
 * The defaults of each mesh profile. Nothing here names an image that does not exist: the companion profiles name
 * the meshes' real image repositories (to recognise what their injectors inject) and meshgate's own image for the
 * validator; `custom` leaves the proxy and init images empty, and meshgate refuses to start until they are set.
 * Pinned by test/config/defaults.json.
 */
import type { MeshName } from '../mesh/types.ts';
import type { MeshgateConfig } from './types.ts';

/** meshgate's own image (this repository's Dockerfile): the validator runs `meshgate validate-redirect` in it. */
export const MESHGATE_IMAGE = 'ghcr.io/meshgate/meshgate:0.1.0';

/**
 * Four of the node agent's default 5-minute resync periods: one missed heartbeat (a slow apiserver, an agent
 * restart) is not enough to unverify a node, a dead agent is noticed within 20 minutes.
 */
const MAX_VERDICT_AGE = 20 * 60;

/** What every profile shares. */
function base(
  mesh: MeshName,
): Pick<
  MeshgateConfig,
  'mesh' | 'meshNamespace' | 'systemNamespaces' | 'redirect' | 'exclusions' | 'apps' | 'enforcement' | 'ambient'
> {
  return {
    mesh,
    meshNamespace: 'meshgate',
    systemNamespaces: ['kube-system', 'kube-public', 'kube-node-lease'],
    redirect: { mode: 'auto', onUnverifiedNode: 'reject', beforeInitContainers: false },
    // One /8 of outbound destinations and 64 ports each way: room for real exemptions (a database subnet, SMTP),
    // never "everything" however the entries are split up.
    exclusions: { outboundCidrCoverage: 8, maxOutboundPorts: 64, maxInboundPorts: 64 },
    // The redirect exempts the proxy's identity: no other container may be able to take it (docs/security.md). What
    // the spec states is refused at admission, what only the node can see is the node side's: legitimate workloads
    // that pin no UID are admitted at enforce.
    apps: { privileges: 'node', restrictedNamespaces: [], baselineNamespaces: [] },
    // A new install audits first: next to a running mesh, nothing is refused until the operator has seen what
    // would be (docs/security.md, "Enforcement levels"); the chart keeps an upgraded release's level.
    enforcement: { default: 'audit' },
    // Istio only (config/semantics.ts); off until the operator says the cluster runs ambient.
    ambient: {
      enabled: false,
      enablementSelectors: ISTIO_AMBIENT_SELECTORS,
      dnsCapture: true,
      timeoutSeconds: 10,
    },
  };
}

const DATAPLANE_MODE = 'istio.io/dataplane-mode';

/**
 * Istio 1.27's default enablement selectors (manifests/charts/istio-cni/values.yaml `ambient.enablementSelectors`):
 * a pod labelled ambient anywhere, or any pod not labelled none in a namespace labelled ambient.
 */
const ISTIO_AMBIENT_SELECTORS = [
  { podSelector: { matchLabels: { [DATAPLANE_MODE]: 'ambient' } } },
  {
    podSelector: { matchExpressions: [{ key: DATAPLANE_MODE, operator: 'NotIn', values: ['none'] }] },
    namespaceSelector: { matchLabels: { [DATAPLANE_MODE]: 'ambient' } },
  },
];

const validator = {
  image: MESHGATE_IMAGE,
  command: ['/nodejs/bin/node', '/app/bin/meshgate.js', 'validate-redirect'],
  timeoutSeconds: 5,
  // meshgate's image is public: nothing to pull it with.
  imagePullSecrets: [] as string[],
};

/**
 * Istio's loopback probe: 127.0.0.6 is redirected only for the proxy's UID/GID (istio-iptables' ISTIO_IN_REDIRECT
 * rule), and without the rules a connection to it is refused inside the pod — nothing leaves.
 */
const ISTIO_PROBE = '127.0.0.6:15002';

const istioImages = ['docker.io/istio/proxyv2', 'gcr.io/istio-release/proxyv2'];
const linkerdProxyImages = ['cr.l5d.io/linkerd/proxy'];
/** Linkerd ships proxy-init inside the proxy image since 2.14; the separate proxy-init image is the older home. */
const linkerdInitImages = ['cr.l5d.io/linkerd/proxy', 'cr.l5d.io/linkerd/proxy-init'];

export const PROFILE_DEFAULTS: Readonly<Record<MeshName, MeshgateConfig>> = {
  istio: {
    ...base('istio'),
    injection: { allowPodOptOut: false, podOptInNamespaceLabels: null },
    cni: {
      pluginType: 'istio-cni',
      redirectsNativeSidecars: true,
      maxVerdictAgeSeconds: MAX_VERDICT_AGE,
      multusNetwork: null,
    },
    proxy: { name: 'istio-proxy', uid: 1337, gid: 1337, idsFrom: 'config', outboundPort: 15001, inboundPort: 15006 },
    init: { name: 'istio-init' },
    validator: { name: 'istio-validation', ...validator, uid: 1337, gid: 1337, probeAddress: ISTIO_PROBE },
    recognisedImages: { proxy: istioImages, init: istioImages, validator: istioImages },
    learnImages: { namespaces: ['istio-system'] },
    // Beside the mesh's defaults and what its ConfigMaps say (src/mesh/control-plane.ts): nothing more by default.
    controlPlane: { addresses: [], trustAnchors: [] },
  },
  linkerd: {
    ...base('linkerd'),
    injection: { allowPodOptOut: false, podOptInNamespaceLabels: null },
    // linkerd-cni finds a native-sidecar proxy from cni-plugin v1.5.0 (Linkerd edge-24.4.x) on.
    cni: {
      pluginType: 'linkerd-cni',
      redirectsNativeSidecars: true,
      maxVerdictAgeSeconds: MAX_VERDICT_AGE,
      multusNetwork: null,
    },
    proxy: { name: 'linkerd-proxy', uid: 2102, outboundPort: 4140, inboundPort: 4143 },
    init: { name: 'linkerd-init' },
    // Linkerd's rules exempt loopback for everyone: the probe must leave the pod's loopback
    // (docs/validate-redirect.md).
    validator: {
      name: 'linkerd-network-validator',
      ...validator,
      uid: 65534,
      gid: 65534,
      probeAddress: '192.0.2.1:80',
    },
    recognisedImages: { proxy: linkerdProxyImages, init: linkerdInitImages, validator: linkerdInitImages },
    learnImages: { namespaces: ['linkerd'] },
    controlPlane: { addresses: [], trustAnchors: [] },
  },
  custom: {
    ...base('custom'),
    injection: { allowPodOptOut: false, podOptInNamespaceLabels: null, nativeSidecar: 'auto' },
    cni: { pluginType: '', redirectsNativeSidecars: true, maxVerdictAgeSeconds: MAX_VERDICT_AGE, multusNetwork: null },
    proxy: {
      name: 'meshgate-proxy',
      uid: 1337,
      gid: 1337,
      outboundPort: 15001,
      inboundPort: 15006,
      image: '',
      args: [],
      env: [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      ],
      ports: [],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '2', memory: '1Gi' } },
      volumeMounts: [],
    },
    // istio-iptables' flags (the most common init image); any redirect tool works if its args say the same.
    init: {
      name: 'meshgate-init',
      image: '',
      // Empty: the image's own entrypoint (pilot-agent in Istio's proxyv2).
      command: [],
      args: [
        'istio-iptables',
        '-p',
        '15001',
        '-z',
        '15006',
        '-u',
        '1337',
        '-g',
        '1337',
        '-m',
        'REDIRECT',
        '-i',
        '*',
        '-x',
        '$(MESHGATE_EXCLUDE_OUTBOUND_CIDRS)',
        '-b',
        '*',
        '-d',
        '$(MESHGATE_EXCLUDE_INBOUND_PORTS)',
        '-o',
        '$(MESHGATE_EXCLUDE_OUTBOUND_PORTS)',
      ],
    },
    validator: { name: 'meshgate-validate', ...validator, uid: 1337, gid: 1337, probeAddress: ISTIO_PROBE },
    volumes: [],
  },
};
