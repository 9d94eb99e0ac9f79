/**
 * meshgate's one typed configuration, as an operator writes it. Parsed and validated once at the edge
 * (config/load.ts) and compiled (config/compile.ts) into the read-only form the admission path uses. `mesh`
 * chooses a profile (src/mesh/) whose defaults fill everything else; which keys exist depends on it: with
 * `istio` and `linkerd` the mesh's own injector injects the proxy (meshgate is its companion), so only the
 * proxy's identity is configured here; with `custom` meshgate injects from the templates below.
 */
import type { MeshName } from '../mesh/types.ts';
import type { LabelSelector } from '../util/selector.ts';

export type RedirectMode = 'auto' | 'required' | 'off';
export type OnUnverifiedNode = 'reject' | 'validate';
export type NativeSidecarMode = 'auto' | 'on' | 'off';
export type AppPrivileges = 'restricted' | 'baseline';

/**
 * How much of what meshgate decides is enforced in a namespace (src/admission/level.ts): `enforce` refuses,
 * `warn` admits with an admission warning, `audit` admits and records. Ordered from the strictest.
 */
export const ENFORCEMENT_LEVELS = ['enforce', 'warn', 'audit'] as const;
export type EnforcementLevel = (typeof ENFORCEMENT_LEVELS)[number];

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface Resources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface ProxyConfig {
  /** Container name; a container under it must be the real proxy (src/policy/identify.ts). */
  name: string;
  /** The proxy's UID: redirect rules exempt it, so only the proxy may run as it (issue: proxy identity). */
  uid: number;
  /** The proxy's GID when the mesh's rules exempt one (Istio); absent for Linkerd, whose rules match the UID only. */
  gid?: number;
  /** Where redirected outbound TCP lands (Istio 15001, Linkerd 4140). */
  outboundPort: number;
  /** Where redirected inbound TCP lands (Istio 15006, Linkerd 4143). */
  inboundPort: number;
  // mesh custom only: the template meshgate injects.
  image?: string;
  args?: string[];
  env?: EnvVar[];
  ports?: ContainerPort[];
  resources?: Resources;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}

export interface InitConfig {
  /** The privileged init container's name (istio-init, linkerd-init, meshgate-init). */
  name: string;
  // mesh custom only: the template meshgate injects. `args` may use $(MESHGATE_EXCLUDE_OUTBOUND_CIDRS),
  // $(MESHGATE_EXCLUDE_OUTBOUND_PORTS) and $(MESHGATE_EXCLUDE_INBOUND_PORTS), which meshgate sets per pod.
  image?: string;
  command?: string[];
  args?: string[];
}

export interface ValidatorConfig {
  name: string;
  image: string;
  /** How the image runs `meshgate validate-redirect`: the distroless image has no shell and no meshgate on PATH. */
  command: string[];
  /**
   * The validator's UID and GID. A loopback probe (Istio's 127.0.0.6) is redirected only for the proxy's identity,
   * so then they must be the proxy's; an off-pod probe (Linkerd) must come from any other UID, which is redirected.
   */
  uid: number;
  gid: number;
  /** Where the probe connects; see docs/validate-redirect.md for why each profile's default cannot leak. */
  probeAddress: string;
  timeoutSeconds: number;
  /**
   * Image pull secrets meshgate adds to a pod's spec.imagePullSecrets when it injects the validator (names absent
   * there only), for a validator image from a registry that needs them. Each must exist in every app namespace:
   * a pod names Secrets of its own namespace only, and meshgate creates or copies none (the kubelet pulls without a
   * missing one and reports it in an Event).
   */
  imagePullSecrets: string[];
}

/**
 * One of Istio's ambient enablement selectors (istio-cni chart `ambient.enablementSelectors`, rendered into ConfigMap
 * istio-cni-config key AMBIENT_ENABLEMENT_SELECTOR): a pod is ambient when both selectors match (an absent one
 * matches everything), and selectors are OR-ed (istio cni/pkg/util/enablement_selector.go).
 */
export interface AmbientSelector {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
}

export interface MeshgateConfig {
  /** Which mesh meshgate guards: istio | linkerd | custom. Required. */
  mesh: MeshName;
  /** meshgate's own namespace: never injected, so meshgate can never block its own pods. */
  meshNamespace: string;
  /** Namespaces never injected or checked besides meshNamespace. */
  systemNamespaces: string[];
  injection: {
    /**
     * Whether a pod in an opted-in namespace may opt itself out (the mesh's own opt-out switch,
     * meshgate.io/inject=false, or hostNetwork). Default false: pod authors are not trusted, such pods are refused.
     */
    allowPodOptOut: boolean;
    /** Namespaces (by labels) where a pod may opt in with the label `meshgate.io/inject: "true"`; null = nowhere. */
    podOptInNamespaceLabels: Record<string, string> | null;
    /**
     * mesh custom: the proxy as a native sidecar (restartPolicy Always init container) — auto from kubelet
     * versions.
     */
    nativeSidecar?: NativeSidecarMode;
  };
  redirect: {
    mode: RedirectMode;
    onUnverifiedNode: OnUnverifiedNode;
    /**
     * Init mode: put the mesh's privileged init container first, so no user init container runs before the redirect
     * (enforced by the validating webhook). Default false, as Istio and Linkerd do by design: their init container
     * runs last so user init containers reach the network while no proxy runs yet (src/policy/order.ts).
     */
    beforeInitContainers: boolean;
  };
  cni: {
    /**
     * The mesh CNI plugin `type` the node agent must find chained; a node verified for another plugin is not
     * verified.
     */
    pluginType: string;
    /** Whether that plugin redirects pods whose proxy is a native sidecar (linkerd-cni only from v1.5.0). */
    redirectsNativeSidecars: boolean;
    /**
     * A verdict whose heartbeat (the condition's lastHeartbeatTime, refreshed by the agent every resync) is older
     * than this counts as unverified (`stale_verdict`): an agent that died must not leave its last word standing.
     */
    maxVerdictAgeSeconds: number;
    /**
     * The OpenShift model (docs/platforms/openshift.md): the mesh plugin is not chained into the default network but
     * runs as this Multus additional network, `namespace/name` of its NetworkAttachmentDefinition (Istio's
     * `default/istio-cni`). Then every CNI-mode pod must list it in `k8s.v1.cni.cncf.io/networks` (meshgate adds it),
     * and the node agent verifies the network of that name in Multus' confDir. Default null: the default chain.
     */
    multusNetwork: string | null;
  };
  proxy: ProxyConfig;
  init: InitConfig;
  validator: ValidatorConfig;
  /** Companion profiles: repositories of the mesh's own images; its containers must come from one of them. */
  recognisedImages?: { proxy: string[]; init: string[]; validator: string[] };
  /**
   * Companion profiles: namespaces where the webhook reads what the installed mesh injects — Istio's
   * istio-sidecar-injector[-<revision>] ConfigMaps (global.hub and the proxy image of each revision), Linkerd's
   * linkerd-config (proxy.image.name) — and trusts those image repositories beside recognisedImages. [] : off.
   */
  learnImages?: { namespaces: string[] };
  /**
   * What a guarded pod's other containers (app, init and ephemeral) must be unable to do (docs/security.md, "Who can
   * become the proxy"). `restricted` (default): each must provably neither run as nor become the proxy's UID/GID —
   * a known runAsUser (and runAsGroup where the mesh exempts a GID), allowPrivilegeEscalation false, and as root
   * SETUID, SETGID and NET_RAW dropped. `baseline`: only an explicit proxy UID/GID and network-admin rights are
   * refused, as Istio and Linkerd do (root containers can then setuid to the proxy and bypass it).
   */
  apps: {
    privileges: AppPrivileges;
    /**
     * Namespaces that cannot comply yet: `baseline` applies there; each pod that breaks `restricted` is admitted with
     * a warning, and the namespaces are reported by `meshgate check` and the metric meshgate_baseline_namespaces.
     */
    baselineNamespaces: string[];
  };
  /**
   * Enforcement levels (docs/security.md, "Enforcement levels"). The webhook learns a namespace's level from the
   * route the apiserver calls (the chart renders one webhook entry per level, selecting namespaces by the label
   * meshgate.io/enforcement); `default` is the level of a guarded namespace without that label: the chart selects
   * those namespaces at it, its admission policy compares a namespace's new level with it, and `meshgate check`,
   * `check --pre` and the repair controller's advice read it. Default `audit`, the level of a new install: meshgate
   * installed next to a running mesh must never refuse a legitimate pod on day one (docs/security.md says why).
   */
  enforcement: {
    default: EnforcementLevel;
  };
  /**
   * Istio's ambient mode (docs/istio.md, "Ambient"): mesh istio only. When enabled, the pods Istio enrols in ambient
   * get meshgate's ambient validator first and are pinned to nodes whose node agent verified istio-cni's chain,
   * its node agent and ztunnel.
   */
  ambient: {
    /** Default false: a sidecar-only install changes nothing. */
    enabled: boolean;
    /** Istio's selectors, as the istio-cni chart is installed with; the default is Istio 1.27's. */
    enablementSelectors: AmbientSelector[];
    /**
     * istio-cni's AMBIENT_DNS_CAPTURE (chart `ambient.dnsCapture`, default true). The ambient validator's probe is
     * redirected by the DNS-capture rule, so with false only pods annotated ambient.istio.io/dns-capture=true pass.
     */
    dnsCapture: boolean;
    /** The ambient validator's deadline over all its attempts (src/validator/ambient.ts says why 10 s). */
    timeoutSeconds: number;
  };
  /** What a pod may exempt from the redirect (annotations or init arguments); the rest is refused. */
  exclusions: {
    /** The excluded outbound CIDRs together may cover at most 2^-N of their address family (8: one /8). */
    outboundCidrCoverage: number;
    maxOutboundPorts: number;
    maxInboundPorts: number;
  };
  /** mesh custom: volumes the injected proxy needs. */
  volumes?: Array<Record<string, unknown> & { name: string }>;
}
