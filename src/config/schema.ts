/**
 * meshgate's configuration shape, declared once (issue 22), in the shape language the pod is declared in too
 * (contract/shape.ts, issue 35). Its nodes are JSON Schema, so this one declaration gives the TypeScript types
 * (`Infer<>`, config/types.ts), the loader's structural checks (config/load.ts walks this declaration itself: which
 * keys exist, each value's kind; plain data, so no daemon loads a schema library) and the chart's
 * `values.schema.json` `properties.config` (scripts/values-schema.ts writes it; test/chart/values-schema.test.ts fails
 * when the committed file differs).
 *
 * Each `description` is what an operator reads in values.schema.json and docs/values.md; the comments above the
 * keys say why, for the code. Value constraints (ranges, patterns) are declared here too, with what a value that breaks
 * one is (`errorMessage`); the loader checks them from this declaration (config/constraints.ts) and helm from the
 * generated chart schema. Only rules between keys are config/semantics.ts's.
 * Which keys a mesh profile takes is not shape: config/profile-keys.ts says it (with why), for the loader's messages
 * and the chart's per-mesh `allOf`. The containers' sections are in config/schema-containers.ts, the kinds of value
 * (enums, nullable, closed sections) in config/schema-kinds.ts.
 */
import { boolean, integer, list, optional, section, string, stringMap, typed } from '../contract/shape.ts';
import { MESH_NAMES } from '../mesh/types.ts';
import type { LabelSelector } from '../util/selector.ts';
import { MAX_ENABLEMENT_SELECTORS } from './enums.ts';
import { InitSchema, ProxySchema, ValidatorSchema } from './schema-containers.ts';
import {
  APP_PRIVILEGES,
  ENFORCEMENT_LEVELS,
  NATIVE_SIDECAR_MODES,
  namespaceName,
  networkName,
  nonEmptyStringList,
  nullable,
  ON_UNVERIFIED_NODE,
  REDIRECT_MODES,
  serviceAccountName,
  stringEnum,
  stringList,
} from './schema-kinds.ts';

export * from './schema-containers.ts';
export { APP_PRIVILEGES, ENFORCEMENT_LEVELS, NATIVE_SIDECAR_MODES, ON_UNVERIFIED_NODE, REDIRECT_MODES };

/**
 * One of Istio's ambient enablement selectors (istio-cni chart `ambient.enablementSelectors`, rendered into ConfigMap
 * istio-cni-config key AMBIENT_ENABLEMENT_SELECTOR): a pod is ambient when both selectors match (an absent one
 * matches everything), and selectors are OR-ed (istio cni/pkg/util/enablement_selector.go). Free-form here: the
 * label selectors' own shape is util/selector.ts's, checked by config/ambient.ts with messages naming the key.
 */
const AmbientSelectorSchema = typed<{ podSelector?: LabelSelector; namespaceSelector?: LabelSelector }>({
  type: 'object',
});

export const MeshgateConfigSchema = section({
  /** Chooses the profile whose defaults fill everything else (config/defaults.ts). */
  mesh: stringEnum(MESH_NAMES as readonly ('istio' | 'linkerd' | 'custom')[], {
    description: 'which mesh meshgate guards: istio | linkerd | custom. Required.',
  }),
  /** Never injected, so meshgate can never block its own pods. */
  meshNamespace: namespaceName({ description: "meshgate's own namespace" }),
  systemNamespaces: stringList({ description: 'namespaces never injected or checked, besides the release namespace' }),
  injection: section({
    /** Default false: pod authors are not trusted, such pods are refused. */
    allowPodOptOut: boolean({
      description:
        "whether a pod in an opted-in namespace may opt itself out (meshgate.io/inject=false, the mesh's own switch, hostNetwork); false: such pods are refused",
    }),
    podOptInNamespaceLabels: nullable(stringMap(), {
      description:
        'namespaces (by labels) where a pod may opt in with the label meshgate.io/inject=true; null: nowhere',
    }),
    /** mesh custom only: auto decides from the kubelet versions. */
    nativeSidecar: optional(
      stringEnum(NATIVE_SIDECAR_MODES, {
        description:
          'the proxy as a native sidecar (an init container with restartPolicy Always); auto: when every kubelet supports it',
      }),
    ),
  }),
  redirect: section({
    mode: stringEnum(REDIRECT_MODES, {
      description:
        'for pods with no node yet: required pins them to verified nodes (Pending until one exists); auto does so when any node is verified, else injects the init container; off always injects the init container',
    }),
    onUnverifiedNode: stringEnum(ON_UNVERIFIED_NODE, {
      description:
        "a pod whose node is known and not verified: reject refuses one bound to it (spec.nodeName) and holds one pinned to it by affinity (a DaemonSet's) Pending until the node is verified; validate gives it the init container, checked by the validator",
    }),
    /**
     * Default false, as Istio and Linkerd do by design: their init container runs last so user init containers
     * reach the network while no proxy runs yet (src/policy/order.ts).
     */
    beforeInitContainers: boolean({
      description:
        "init mode: the mesh's privileged init container runs first, before any user init container (Istio and Linkerd run it last by design); enforced by the validating webhook",
    }),
  }),
  cni: section({
    /** A node verified for another plugin is not verified. */
    pluginType: string({
      minLength: 1,
      pattern: '\\S',
      errorMessage: 'must name the mesh CNI plugin the node agent checks for (e.g. istio-cni)',
      description: 'the mesh CNI plugin type the node agent checks, e.g. istio-cni',
    }),
    redirectsNativeSidecars: boolean({
      description:
        'whether the CNI plugin redirects pods whose proxy is a native sidecar (linkerd-cni only from v1.5.0)',
    }),
    /**
     * Against the condition's lastHeartbeatTime, refreshed by the agent every resync: an agent that died must not
     * leave its last word standing.
     */
    maxVerdictAgeSeconds: integer({
      minimum: 60,
      errorMessage: 'is not a whole number of seconds >= 60 (the agent heartbeats once per resync)',
      description:
        'a verdict older than this counts as unverified (stale_verdict); the agent re-confirms once per nodeAgent.resync',
    }),
    /** The OpenShift model (docs/platforms/openshift.md); the node agent verifies the network of that name. */
    multusNetwork: nullable(networkName(), {
      description:
        'OpenShift model: namespace/name of the Multus NetworkAttachmentDefinition that runs the mesh plugin as an additional network (Istio: default/istio-cni); CNI-mode pods must list it in k8s.v1.cni.cncf.io/networks, meshgate adds it. null: the plugin is chained into the default network',
    }),
  }),
  proxy: ProxySchema,
  init: InitSchema,
  validator: ValidatorSchema,
  /** Companion profiles only: the webhook reads the ConfigMaps through its caches, never on the admission path. */
  learnImages: optional(
    section(
      { namespaces: list(namespaceName()) },
      {
        description:
          "istio, linkerd: namespaces where the webhook reads what the installed mesh injects (Istio's istio-sidecar-injector ConfigMaps of every revision, Linkerd's linkerd-config) and trusts those image repositories beside recognisedImages; [] turns it off. Default: istio-system (istio), linkerd (linkerd)",
      },
    ),
  ),
  /** Companion profiles only: the mesh's containers must come from one of these repositories. */
  recognisedImages: optional(
    section(
      {
        proxy: nonEmptyStringList({ errorMessage: "must list the repositories of the mesh's proxy image" }),
        init: nonEmptyStringList({ errorMessage: "must list the repositories of the mesh's init image" }),
        validator: nonEmptyStringList({ errorMessage: 'must list the repositories of the validator image' }),
      },
      { description: "istio, linkerd: repositories of the mesh's own images (a mirror, a private registry)" },
    ),
  ),
  /**
   * Companion profiles: the control plane the mesh's proxy may use besides the mesh's defaults and what its ConfigMaps
   * say (learnImages; src/mesh/control-plane.ts, issue 33 §3): where the proxy connects for configuration and
   * certificates, and the trust anchors Linkerd's proxy is given.
   */
  controlPlane: optional(
    section(
      {
        addresses: optional(
          stringList({
            description:
              "host:port the mesh's proxy may connect to for its configuration and certificates (Istio's discoveryAddress and CA_ADDR, Linkerd's *_SVC_ADDR), beside the mesh's defaults and what its ConfigMaps say",
          }),
        ),
        trustAnchors: optional(
          stringList({
            description:
              "linkerd: PEM certificates the proxy's LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS may hold, beside linkerd-identity-trust-roots (learned)",
          }),
        ),
      },
      {
        description:
          "istio, linkerd: the mesh's control plane and trust roots where the webhook cannot learn them (learnImages off, an external control plane)",
      },
    ),
  ),
  exclusions: section({
    outboundCidrCoverage: integer({
      description: 'excluded outbound CIDRs together may cover at most 2^-N of their address family (8: one /8)',
      minimum: 1,
      maximum: 32,
    }),
    maxOutboundPorts: integer({
      description: 'outbound ports a pod may exclude from the redirect',
      errorMessage: 'is not a number of ports (0-65535)',
      minimum: 0,
      maximum: 65535,
    }),
    maxInboundPorts: integer({
      description: 'inbound ports a pod may exclude from the redirect',
      errorMessage: 'is not a number of ports (0-65535)',
      minimum: 0,
      maximum: 65535,
    }),
  }),
  /**
   * docs/security.md, "Who can become the proxy". Admission sees the spec, the node sees the process (STYLE.md §20):
   * `node` (default) refuses at admission only what the spec itself states — the proxy's UID/GID, privileged or
   * NET_ADMIN/SYS_ADMIN/ALL (under every setting), and SETUID/SETGID added by name — and leaves an image's USER, the
   * runtime's default capabilities, set-user-ID binaries and file capabilities to the node side, which keys on the
   * pods meshgate guards (meshgate.io/status and the admission mark). `restricted` demands at admission what only
   * the node could otherwise prove: a known runAsUser (and runAsGroup where the mesh exempts a GID),
   * allowPrivilegeEscalation false, SETUID/SETGID/NET_RAW dropped — the hardening for namespaces where no window
   * between start and the node's verdict is acceptable. `baseline`: as Istio and Linkerd do (root containers can
   * setuid to the proxy and bypass it). The namespace lists are the cluster admin's (this config), never a namespace
   * label a namespace admin could write; a namespace may be in at most one (config/semantics.ts).
   */
  apps: section(
    {
      privileges: stringEnum(APP_PRIVILEGES, {
        description:
          "node: admission refuses what the spec states (the proxy's UID/GID, network-admin rights, SETUID/SETGID added), the node side what only the node can see (image USER, the runtime's capabilities, set-user-ID binaries); restricted: no container but the mesh's may be able to run as or become the proxy's UID/GID, proven at admission; baseline: only the explicit proxy UID/GID is refused",
      }),
      /** With `node`: where admission-time hardening is wanted. Reported by `meshgate check`. */
      restrictedNamespaces: list(namespaceName(), {
        description:
          'namespaces held to restricted whatever apps.privileges says (no window between a container start and the node side is acceptable there)',
      }),
      /** Reported by `meshgate check` and the metric meshgate_baseline_namespaces. */
      baselineNamespaces: list(namespaceName(), {
        description:
          'namespaces that cannot comply yet: what apps.privileges would refuse there is admitted with a warning',
      }),
    },
    { description: "what a guarded pod's other containers must be unable to do (docs/security.md)" },
  ),
  /**
   * The webhook learns a namespace's level from the route the apiserver calls (one webhook entry per level);
   * `default` is read by the chart, its admission policy, `meshgate check` and the repair controller. Default
   * `audit`: meshgate installed next to a running mesh must never refuse a legitimate pod on day one.
   */
  enforcement: section(
    {
      default: stringEnum(ENFORCEMENT_LEVELS, {
        description:
          'the level of a guarded namespace without the label meshgate.io/enforcement: enforce refuses, warn admits with a warning, audit admits and records; unset: audit for a new install, the current level for an upgrade',
      }),
    },
    { description: 'enforcement levels (docs/security.md)' },
  ),
  /**
   * Interactive access to the mesh's containers (issue 33 §1, docs/security.md "Interactive access"): `kubectl exec`
   * and `attach` into the proxy run as its UID, past the redirect, with its identity's keys in reach. In guarded
   * namespaces only these users and groups may, each time recorded. Default: group system:masters, like
   * enforcement.admins (cluster admins can remove the webhook anyway; what they do through it is recorded).
   */
  access: section(
    {
      debuggers: section(
        {
          users: stringList({ description: 'usernames, as the apiserver authenticates them' }),
          groups: stringList({ description: 'groups, as the apiserver authenticates them' }),
        },
        {
          description:
            "who may kubectl exec or attach into the mesh's containers (proxy, init, validator) in guarded namespaces; each access is recorded (audit annotation, metric, log, Event)",
        },
      ),
    },
    { description: "interactive access to the mesh's containers (docs/security.md)" },
  ),
  /** mesh istio only (config/semantics.ts); default off, so a sidecar-only install changes nothing. */
  ambient: section(
    {
      enabled: boolean({
        description:
          "guard the pods Istio enrols in ambient mode: meshgate's ambient validator first, pinned to nodes whose istio-cni chain, node agent and ztunnel are verified",
      }),
      enablementSelectors: list(AmbientSelectorSchema, {
        maxItems: MAX_ENABLEMENT_SELECTORS,
        description:
          "Istio's ambient enablement selectors (istio-cni chart ambient.enablementSelectors); default Istio 1.27's",
      }),
      /** With false, only pods annotated ambient.istio.io/dns-capture=true pass the validator's probe. */
      dnsCapture: boolean({
        description:
          "istio-cni's ambient.dnsCapture (AMBIENT_DNS_CAPTURE); the ambient validator's probe needs DNS capture",
      }),
      /** src/validator/ambient.ts says why 10 s. */
      timeoutSeconds: integer({
        minimum: 1,
        maximum: 300,
        description: "the ambient validator's deadline over all its attempts",
      }),
      /**
       * istio-cni's node agent is the one writer of ambient.istio.io/redirection on a running pod (issue 33 §8): an
       * UPDATE that changes it is admitted only from this account, with a token bound to a pod on the pod's node.
       */
      cniServiceAccount: serviceAccountName(
        "namespace/name of istio-cni's ServiceAccount: the only one (with a token of a pod on the pod's node) that may change ambient.istio.io/redirection on an existing pod",
      ),
    },
    { description: "Istio's ambient mode (docs/istio.md, Ambient); mesh istio only" },
  ),
  volumes: optional(
    list(typed<Record<string, unknown> & { name: string }>({ type: 'object', required: ['name'] }), {
      description: 'volumes the injected proxy needs',
    }),
  ),
});
