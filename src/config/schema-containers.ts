/**
 * The containers meshgate names or injects, as config/schema.ts declares them: the proxy and the mesh's init
 * container (identity for every profile, templates for mesh custom) and meshgate's validator.
 */
import {
  boolean,
  integer,
  list,
  mapping,
  number,
  optional,
  record,
  section,
  string,
  typed,
} from '../contract/shape.ts';
import {
  containerName,
  imageReference,
  nonEmptyStringList,
  nonRootId,
  portNumber,
  secretName,
  stringEnum,
  stringList,
} from './schema-kinds.ts';
import { PROXY_IDS_FROM } from './enums.ts';

/** Kubernetes objects meshgate copies into the injected proxy: free-form beyond their required keys. */
export const EnvVarSchema = mapping({
  name: string(),
  value: optional(string()),
  valueFrom: optional(record()),
});
export const ContainerPortSchema = mapping({
  name: optional(string()),
  containerPort: integer(),
  protocol: optional(string()),
});
const ResourceList = typed<Record<string, string>>({
  type: 'object',
  additionalProperties: { type: ['string', 'number'] },
});
export const ResourcesSchema = section({
  requests: optional(ResourceList),
  limits: optional(ResourceList),
});
const VolumeMountSchema = mapping({
  name: string(),
  mountPath: string(),
  readOnly: optional(boolean()),
});

export const ProxySchema = section({
  /** A container under this name must be the real proxy (src/policy/identify.ts). */
  name: containerName("the proxy container's name; a container under it must be the real proxy"),
  /** Redirect rules exempt this UID, so only the proxy may run as it (issue: proxy identity). */
  uid: nonRootId("the proxy's UID: the redirect rules exempt it, so only the proxy may run as it"),
  /** Absent for Linkerd, whose rules match the UID only. */
  gid: optional(nonRootId("the proxy's GID when the mesh's rules exempt one (Istio)")),
  /**
   * Istio only. `openshift`: istiod runs with PLATFORM=openshift and takes the proxy's UID/GID from each namespace's
   * UID range (src/mesh/istio-openshift.ts); meshgate reads the same annotations from its namespace cache and judges
   * every pod of that namespace, and runs its validator, with those IDs. `config`: uid and gid above everywhere.
   */
  idsFrom: optional(
    stringEnum(PROXY_IDS_FROM, {
      description:
        "istio: config (uid/gid above) or openshift: as istiod with PLATFORM=openshift, each namespace's openshift.io/sa.scc.uid-range and supplemental-groups decide the proxy's UID/GID (and the validator's)",
    }),
  ),
  outboundPort: portNumber('where redirected outbound TCP lands (Istio 15001, Linkerd 4140)'),
  inboundPort: portNumber('where redirected inbound TCP lands (Istio 15006, Linkerd 4143)'),
  // mesh custom only: the template meshgate injects.
  image: optional(imageReference('the proxy image meshgate injects')),
  args: optional(stringList({ description: "the proxy container's args" })),
  env: optional(list(EnvVarSchema)),
  ports: optional(list(ContainerPortSchema)),
  resources: optional(ResourcesSchema),
  volumeMounts: optional(list(VolumeMountSchema)),
});

export const InitSchema = section({
  name: containerName("the privileged init container's name"),
  // mesh custom only: the template meshgate injects. meshgate sets the $(MESHGATE_…) variables per pod.
  image: optional(imageReference('the init image meshgate injects where a node is not verified')),
  command: optional(
    stringList({ description: "custom: the init container's command (empty: the image's entrypoint)" }),
  ),
  args: optional(
    stringList({
      description:
        "the init container's args; may use $(MESHGATE_EXCLUDE_OUTBOUND_CIDRS), $(MESHGATE_EXCLUDE_OUTBOUND_PORTS), $(MESHGATE_EXCLUDE_INBOUND_PORTS)",
    }),
  ),
});

export const ValidatorSchema = section({
  name: containerName("the validation init container's name"),
  image: imageReference("the validator's image (default: the chart's image)"),
  /** The distroless image has no shell and no meshgate on PATH. */
  command: nonEmptyStringList({ description: 'how the image runs meshgate validate-redirect' }),
  /**
   * A loopback probe (Istio's 127.0.0.6) is redirected only for the proxy's identity, so then uid and gid must be
   * the proxy's; an off-pod probe (Linkerd) must come from any other UID, which is redirected.
   */
  uid: nonRootId(
    "the validator's UID: the proxy's for a loopback probe (Istio), another for an off-pod probe (Linkerd)",
  ),
  gid: nonRootId("the validator's GID, as uid"),
  /** docs/validate-redirect.md says why each profile's default cannot leak. */
  probeAddress: string({
    description: 'host:port the probe connects to (docs/validate-redirect.md)',
    minLength: 1,
  }),
  timeoutSeconds: number({
    description: 'how long the probe waits for the redirected connection',
    exclusiveMinimum: 0,
    maximum: 300,
  }),
  /**
   * Added (names absent there only) when the validator is injected, for a validator image from a registry that
   * needs them. A pod names Secrets of its own namespace only, and meshgate creates or copies none (the kubelet
   * pulls without a missing one and reports it in an Event).
   */
  imagePullSecrets: list(secretName(), {
    description:
      "Secret names added to a pod's imagePullSecrets with the validator; each must exist in every app namespace",
    maxItems: 8,
    uniqueItems: true,
  }),
});
