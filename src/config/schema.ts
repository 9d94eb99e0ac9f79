/**
 * meshgate's configuration shape, declared once (issue 22). TypeBox schemas are JSON Schema, so this one declaration
 * gives the TypeScript types (`Static<>`, config/types.ts), the loader's structural checks (config/load.ts walks
 * these schemas: which keys exist, each value's kind) and the chart's `values.schema.json` `properties.config`
 * (scripts/values-schema.ts writes it; test/chart/values-schema.test.ts fails when the committed file differs).
 *
 * Each `description` is what an operator reads in values.schema.json and docs/values.md; the comments above the
 * keys say why, for the code. Value constraints (ranges, patterns) are the chart's; meshgate's loader checks values
 * in config/semantics.ts with messages of its own, and test/chart/config-agreement.test.ts holds the two equal.
 * Which keys a mesh profile takes is not shape: config/profile-keys.ts says it (with why), for the loader's messages and
 * the chart's per-mesh `allOf`.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { MESH_NAMES } from '../mesh/types.ts';
import type { LabelSelector } from '../util/selector.ts';

interface Described {
  description?: string;
}

/** A string from a closed list, as JSON Schema's `enum` (TypeBox's union of literals would be an `anyOf`). */
function StringEnum<const T extends readonly string[]>(values: T, options: Described = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `schema` or null, as one `type: [kind, "null"]`, which the chart's docs and the loader read as one kind. */
function Nullable<T extends TSchema>(schema: T, options: Described = {}) {
  const { type, ...rest } = JSON.parse(JSON.stringify(schema)) as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...options, type: [type, 'null'], ...rest });
}

/** A closed object: an unknown key under it is an error, in the loader and in helm. */
function Section<T extends Parameters<typeof Type.Object>[0]>(properties: T, options: Described = {}) {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

const StringMap = (options: Described = {}) =>
  Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' }, ...options });
const StringList = (options: Described = {}) => Type.Array(Type.String(), options);
const NonEmptyStringList = (options: Described = {}) =>
  Type.Array(Type.String({ minLength: 1 }), { minItems: 1, ...options });
const ContainerName = (description: string) =>
  Type.String({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63, description });
const NonRootId = (description: string) => Type.Integer({ minimum: 1, maximum: 2147483647, description });
const Port = (description: string) => Type.Integer({ minimum: 1, maximum: 65535, description });
const Image = (description: string) => Type.String({ minLength: 1, description });

export const REDIRECT_MODES = ['auto', 'required', 'off'] as const;
export const ON_UNVERIFIED_NODE = ['reject', 'validate'] as const;
export const NATIVE_SIDECAR_MODES = ['auto', 'on', 'off'] as const;
export const APP_PRIVILEGES = ['restricted', 'baseline'] as const;
/**
 * How much of what meshgate decides is enforced in a namespace (src/admission/level.ts): `enforce` refuses,
 * `warn` admits with an admission warning, `audit` admits and records. Ordered from the strictest.
 */
export const ENFORCEMENT_LEVELS = ['enforce', 'warn', 'audit'] as const;

/** Kubernetes objects meshgate copies into the injected proxy: free-form beyond their required keys. */
export const EnvVarSchema = Type.Object({
  name: Type.String(),
  value: Type.Optional(Type.String()),
  valueFrom: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export const ContainerPortSchema = Type.Object({
  name: Type.Optional(Type.String()),
  containerPort: Type.Integer(),
  protocol: Type.Optional(Type.String()),
});
const ResourceList = Type.Unsafe<Record<string, string>>({
  type: 'object',
  additionalProperties: { type: ['string', 'number'] },
});
export const ResourcesSchema = Section({
  requests: Type.Optional(ResourceList),
  limits: Type.Optional(ResourceList),
});
const VolumeMountSchema = Type.Object({
  name: Type.String(),
  mountPath: Type.String(),
  readOnly: Type.Optional(Type.Boolean()),
});

export const ProxySchema = Section({
  /** A container under this name must be the real proxy (src/policy/identify.ts). */
  name: ContainerName("the proxy container's name; a container under it must be the real proxy"),
  /** Redirect rules exempt this UID, so only the proxy may run as it (issue: proxy identity). */
  uid: NonRootId("the proxy's UID: the redirect rules exempt it, so only the proxy may run as it"),
  /** Absent for Linkerd, whose rules match the UID only. */
  gid: Type.Optional(NonRootId("the proxy's GID when the mesh's rules exempt one (Istio)")),
  outboundPort: Port('where redirected outbound TCP lands (Istio 15001, Linkerd 4140)'),
  inboundPort: Port('where redirected inbound TCP lands (Istio 15006, Linkerd 4143)'),
  // mesh custom only: the template meshgate injects.
  image: Type.Optional(Image('the proxy image meshgate injects')),
  args: Type.Optional(StringList({ description: "the proxy container's args" })),
  env: Type.Optional(Type.Array(EnvVarSchema)),
  ports: Type.Optional(Type.Array(ContainerPortSchema)),
  resources: Type.Optional(ResourcesSchema),
  volumeMounts: Type.Optional(Type.Array(VolumeMountSchema)),
});

export const InitSchema = Section({
  name: ContainerName("the privileged init container's name"),
  // mesh custom only: the template meshgate injects. meshgate sets the $(MESHGATE_…) variables per pod.
  image: Type.Optional(Image('the init image meshgate injects where a node is not verified')),
  command: Type.Optional(
    StringList({ description: "custom: the init container's command (empty: the image's entrypoint)" }),
  ),
  args: Type.Optional(
    StringList({
      description:
        "the init container's args; may use $(MESHGATE_EXCLUDE_OUTBOUND_CIDRS), $(MESHGATE_EXCLUDE_OUTBOUND_PORTS), $(MESHGATE_EXCLUDE_INBOUND_PORTS)",
    }),
  ),
});

export const ValidatorSchema = Section({
  name: ContainerName("the validation init container's name"),
  image: Image("the validator's image (default: the chart's image)"),
  /** The distroless image has no shell and no meshgate on PATH. */
  command: NonEmptyStringList({ description: 'how the image runs meshgate validate-redirect' }),
  /**
   * A loopback probe (Istio's 127.0.0.6) is redirected only for the proxy's identity, so then uid and gid must be
   * the proxy's; an off-pod probe (Linkerd) must come from any other UID, which is redirected.
   */
  uid: NonRootId(
    "the validator's UID: the proxy's for a loopback probe (Istio), another for an off-pod probe (Linkerd)",
  ),
  gid: NonRootId("the validator's GID, as uid"),
  /** docs/validate-redirect.md says why each profile's default cannot leak. */
  probeAddress: Type.String({
    description: 'host:port the probe connects to (docs/validate-redirect.md)',
    minLength: 1,
  }),
  timeoutSeconds: Type.Number({
    description: 'how long the probe waits for the redirected connection',
    exclusiveMinimum: 0,
    maximum: 300,
  }),
  /**
   * Added (names absent there only) when the validator is injected, for a validator image from a registry that
   * needs them. A pod names Secrets of its own namespace only, and meshgate creates or copies none (the kubelet
   * pulls without a missing one and reports it in an Event).
   */
  imagePullSecrets: Type.Array(Type.String({ pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$', maxLength: 253 }), {
    description:
      "Secret names added to a pod's imagePullSecrets with the validator; each must exist in every app namespace",
    maxItems: 8,
    uniqueItems: true,
  }),
});

/**
 * One of Istio's ambient enablement selectors (istio-cni chart `ambient.enablementSelectors`, rendered into ConfigMap
 * istio-cni-config key AMBIENT_ENABLEMENT_SELECTOR): a pod is ambient when both selectors match (an absent one
 * matches everything), and selectors are OR-ed (istio cni/pkg/util/enablement_selector.go). Free-form here: the
 * label selectors' own shape is util/selector.ts's, checked by config/ambient.ts with messages naming the key.
 */
const AmbientSelectorSchema = Type.Unsafe<{ podSelector?: LabelSelector; namespaceSelector?: LabelSelector }>({
  type: 'object',
});

export const MeshgateConfigSchema = Section({
  /** Chooses the profile whose defaults fill everything else (config/defaults.ts). */
  mesh: StringEnum(MESH_NAMES as readonly ('istio' | 'linkerd' | 'custom')[], {
    description: 'which mesh meshgate guards: istio | linkerd | custom. Required.',
  }),
  /** Never injected, so meshgate can never block its own pods. */
  meshNamespace: Type.String({ description: "meshgate's own namespace" }),
  systemNamespaces: StringList({ description: 'namespaces never injected or checked, besides the release namespace' }),
  injection: Section({
    /** Default false: pod authors are not trusted, such pods are refused. */
    allowPodOptOut: Type.Boolean({
      description:
        "whether a pod in an opted-in namespace may opt itself out (meshgate.io/inject=false, the mesh's own switch, hostNetwork); false: such pods are refused",
    }),
    podOptInNamespaceLabels: Nullable(StringMap(), {
      description:
        'namespaces (by labels) where a pod may opt in with the label meshgate.io/inject=true; null: nowhere',
    }),
    /** mesh custom only: auto decides from the kubelet versions. */
    nativeSidecar: Type.Optional(
      StringEnum(NATIVE_SIDECAR_MODES, {
        description:
          'the proxy as a native sidecar (an init container with restartPolicy Always); auto: when every kubelet supports it',
      }),
    ),
  }),
  redirect: Section({
    mode: StringEnum(REDIRECT_MODES, {
      description:
        'for pods with no node yet: required pins them to verified nodes (Pending until one exists); auto does so when any node is verified, else injects the init container; off always injects the init container',
    }),
    onUnverifiedNode: StringEnum(ON_UNVERIFIED_NODE, {
      description:
        "a pod whose node is known and not verified: reject refuses one bound to it (spec.nodeName) and holds one pinned to it by affinity (a DaemonSet's) Pending until the node is verified; validate gives it the init container, checked by the validator",
    }),
    /**
     * Default false, as Istio and Linkerd do by design: their init container runs last so user init containers
     * reach the network while no proxy runs yet (src/policy/order.ts).
     */
    beforeInitContainers: Type.Boolean({
      description:
        "init mode: the mesh's privileged init container runs first, before any user init container (Istio and Linkerd run it last by design); enforced by the validating webhook",
    }),
  }),
  cni: Section({
    /** A node verified for another plugin is not verified. */
    pluginType: Type.String({
      minLength: 1,
      description: 'the mesh CNI plugin type the node agent checks, e.g. istio-cni',
    }),
    redirectsNativeSidecars: Type.Boolean({
      description:
        'whether the CNI plugin redirects pods whose proxy is a native sidecar (linkerd-cni only from v1.5.0)',
    }),
    /**
     * Against the condition's lastHeartbeatTime, refreshed by the agent every resync: an agent that died must not
     * leave its last word standing.
     */
    maxVerdictAgeSeconds: Type.Integer({
      minimum: 60,
      description:
        'a verdict older than this counts as unverified (stale_verdict); the agent re-confirms once per nodeAgent.resync',
    }),
    /** The OpenShift model (docs/platforms/openshift.md); the node agent verifies the network of that name. */
    multusNetwork: Nullable(Type.String({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }), {
      description:
        'OpenShift model: namespace/name of the Multus NetworkAttachmentDefinition that runs the mesh plugin as an additional network (Istio: default/istio-cni); CNI-mode pods must list it in k8s.v1.cni.cncf.io/networks, meshgate adds it. null: the plugin is chained into the default network',
    }),
  }),
  proxy: ProxySchema,
  init: InitSchema,
  validator: ValidatorSchema,
  /** Companion profiles only: the webhook reads the ConfigMaps through its caches, never on the admission path. */
  learnImages: Type.Optional(
    Section(
      { namespaces: StringList() },
      {
        description:
          "istio, linkerd: namespaces where the webhook reads what the installed mesh injects (Istio's istio-sidecar-injector ConfigMaps of every revision, Linkerd's linkerd-config) and trusts those image repositories beside recognisedImages; [] turns it off. Default: istio-system (istio), linkerd (linkerd)",
      },
    ),
  ),
  /** Companion profiles only: the mesh's containers must come from one of these repositories. */
  recognisedImages: Type.Optional(
    Section(
      { proxy: NonEmptyStringList(), init: NonEmptyStringList(), validator: NonEmptyStringList() },
      { description: "istio, linkerd: repositories of the mesh's own images (a mirror, a private registry)" },
    ),
  ),
  exclusions: Section({
    outboundCidrCoverage: Type.Integer({
      description: 'excluded outbound CIDRs together may cover at most 2^-N of their address family (8: one /8)',
      minimum: 1,
      maximum: 32,
    }),
    maxOutboundPorts: Type.Integer({
      description: 'outbound ports a pod may exclude from the redirect',
      minimum: 0,
      maximum: 65535,
    }),
    maxInboundPorts: Type.Integer({
      description: 'inbound ports a pod may exclude from the redirect',
      minimum: 0,
      maximum: 65535,
    }),
  }),
  /**
   * docs/security.md, "Who can become the proxy". `restricted` (default): each other container must provably neither
   * run as nor become the proxy's UID/GID — a known runAsUser (and runAsGroup where the mesh exempts a GID),
   * allowPrivilegeEscalation false, and as root SETUID, SETGID and NET_RAW dropped. `baseline`: as Istio and Linkerd
   * do (root containers can then setuid to the proxy and bypass it).
   */
  apps: Section(
    {
      privileges: StringEnum(APP_PRIVILEGES, {
        description:
          "restricted: no container but the mesh's may run as or become the proxy's UID/GID; baseline: only the explicit proxy UID/GID is refused",
      }),
      /** Reported by `meshgate check` and the metric meshgate_baseline_namespaces. */
      baselineNamespaces: Type.Array(Type.String({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }), {
        description: 'namespaces that cannot comply with restricted yet (admitted with a warning)',
      }),
    },
    { description: "what a guarded pod's other containers must be unable to do (docs/security.md)" },
  ),
  /**
   * The webhook learns a namespace's level from the route the apiserver calls (one webhook entry per level);
   * `default` is read by the chart, its admission policy, `meshgate check` and the repair controller. Default
   * `audit`: meshgate installed next to a running mesh must never refuse a legitimate pod on day one.
   */
  enforcement: Section(
    {
      default: StringEnum(ENFORCEMENT_LEVELS, {
        description:
          'the level of a guarded namespace without the label meshgate.io/enforcement: enforce refuses, warn admits with a warning, audit admits and records; unset: audit for a new install, the current level for an upgrade',
      }),
    },
    { description: 'enforcement levels (docs/security.md)' },
  ),
  /** mesh istio only (config/semantics.ts); default off, so a sidecar-only install changes nothing. */
  ambient: Section(
    {
      enabled: Type.Boolean({
        description:
          "guard the pods Istio enrols in ambient mode: meshgate's ambient validator first, pinned to nodes whose istio-cni chain, node agent and ztunnel are verified",
      }),
      enablementSelectors: Type.Array(AmbientSelectorSchema, {
        description:
          "Istio's ambient enablement selectors (istio-cni chart ambient.enablementSelectors); default Istio 1.27's",
      }),
      /** With false, only pods annotated ambient.istio.io/dns-capture=true pass the validator's probe. */
      dnsCapture: Type.Boolean({
        description:
          "istio-cni's ambient.dnsCapture (AMBIENT_DNS_CAPTURE); the ambient validator's probe needs DNS capture",
      }),
      /** src/validator/ambient.ts says why 10 s. */
      timeoutSeconds: Type.Integer({
        minimum: 1,
        maximum: 300,
        description: "the ambient validator's deadline over all its attempts",
      }),
    },
    { description: "Istio's ambient mode (docs/istio.md, Ambient); mesh istio only" },
  ),
  volumes: Type.Optional(
    Type.Array(Type.Unsafe<Record<string, unknown> & { name: string }>({ type: 'object', required: ['name'] }), {
      description: 'volumes the injected proxy needs',
    }),
  ),
});
