/**
 * The environment of Istio's containers, as pilot-agent 1.27 reads it. The injector writes a fixed set of variables
 * (manifests/charts/istio-control/istio-discovery/files/injection-template.yaml) plus every entry of ProxyConfig's
 * proxyMetadata, which a pod sets through its `proxy.istio.io/config` annotation: so the names are open, and each is
 * judged by what pilot-agent does with it (`env.Register` across pilot/cmd/pilot-agent, pkg/istio-agent,
 * pkg/bootstrap, pkg/envoy). Names that choose the Envoy binary, its bootstrap or whether it runs are refused; the
 * ones that carry the pod's identity must come from the downward API as the template writes them; the rest (log
 * levels, metadata, timeouts) change no program, file or identity.
 */
import { isObject } from '../../util/json.ts';
import { goBool } from '../../mesh/flags.ts';
import { type ControlPlane, ISTIO_TRUST_VARIABLES, isControlPlaneAddress } from '../../mesh/control-plane.ts';
import { anyLiteral, fieldRef, resourceFieldRef, type EnvContract, type EnvRefusal, type EnvRule } from './checks.ts';
import type { ContractContext, Problem } from './types.ts';

const refuse = (why: string): EnvRefusal => ({ refuse: why });

/** What istio-cni and pilot-agent accept as "on" for a boolean (Go's strconv.ParseBool). */
const mustBeFalse =
  (what: string): EnvRule['value'] =>
  (v) =>
    goBool(v) === true ? what : undefined;

const INTERCEPTION: EnvRule = {
  value: (v) => (v === 'REDIRECT' || v === 'TPROXY' ? undefined : 'only REDIRECT and TPROXY redirect traffic'),
};

/**
 * The control plane's addresses (src/mesh/control-plane.ts): istiod's discovery service and CA of an installed
 * revision, or what the mesh's config and the operator name. Any other namespace or DNS suffix is refused: a Service
 * named istiod in the pod's own namespace, or an external name, is a control plane of its author's.
 */
const controlPlaneAddress =
  (what: string) =>
  (v: unknown, cp: ControlPlane): Problem =>
    typeof v === 'string' && isControlPlaneAddress(cp, v)
      ? undefined
      : `it points the proxy's ${what} at another address than the installed control plane's (${cp.addresses.join(', ')}), which would configure what the proxy does with the pod's traffic`;

/** ProxyConfig fields (proto JSON names) that choose what runs, from which files, or which control plane and roots. */
const PROXY_CONFIG_PINNED: Readonly<Record<string, (v: unknown, cp: ControlPlane) => Problem>> = {
  binaryPath: (v) => (v === '/usr/local/bin/envoy' ? undefined : 'it chooses the Envoy binary the agent runs'),
  customConfigFile: () => 'Envoy would start from a bootstrap file the pod supplies',
  proxyBootstrapTemplatePath: (v) =>
    v === './var/lib/istio/envoy/envoy_bootstrap_tmpl.json'
      ? undefined
      : "Envoy's bootstrap would be rendered from a template the pod supplies",
  configPath: (v) =>
    v === './etc/istio/proxy' ? undefined : 'it moves where the agent writes and reads the bootstrap',
  interceptionMode: (v) =>
    v === 'REDIRECT' || v === 'TPROXY' ? undefined : 'only REDIRECT and TPROXY redirect traffic',
  discoveryAddress: controlPlaneAddress('discovery (xDS) connection'),
  // Extra roots the proxy trusts for workload mTLS: only those the mesh's own config gives every proxy.
  caCertificatesPem: (v, cp) =>
    Array.isArray(v) && v.every((p) => typeof p === 'string' && cp.caCertificatesPem.includes(p))
      ? undefined
      : 'it adds root certificates the mesh does not give its proxies, which the proxy would trust for mTLS',
};

/** PROXY_CONFIG's JSON (protoToJSON of the merged ProxyConfig): the pinned fields, and proxyMetadata as env. */
export function proxyConfigProblem(json: string, cp: ControlPlane): Problem {
  let pc: unknown;
  try {
    pc = JSON.parse(json);
  } catch {
    return 'is not the JSON pilot-agent reads';
  }
  if (!isObject(pc)) return 'is not a ProxyConfig object';
  for (const [field, check] of Object.entries(PROXY_CONFIG_PINNED)) {
    if (pc[field] === undefined) continue;
    const p = check(pc[field], cp);
    if (p) return `sets ${field} ${JSON.stringify(pc[field])}: ${p}`;
  }
  const meta = pc.proxyMetadata;
  if (meta !== undefined) {
    if (!isObject(meta)) return 'has a proxyMetadata that is not a mapping';
    for (const [k, v] of Object.entries(meta)) {
      const p = metadataProblem(k, String(v), cp);
      if (p) return `sets proxyMetadata ${k}: ${p}`;
    }
  }
  return undefined;
}

/** Variables pilot-agent reads that choose the Envoy binary, its bootstrap, or whether Envoy runs at all. */
const REFUSED: Readonly<Record<string, EnvRule | EnvRefusal>> = {
  ENVOY_PATH: refuse('it chooses the Envoy binary pilot-agent runs'),
  ISTIO_BOOTSTRAP: refuse("Envoy's bootstrap would come from a template the pod supplies"),
  ISTIO_BOOTSTRAP_OVERRIDE: refuse('Envoy would start from a bootstrap the pod supplies'),
  DISABLE_ENVOY: { value: mustBeFalse('Envoy would not run, and istio-cni skips the pod') },
  WORKLOAD_IDENTITY_SOCKET_FILE: refuse('it moves the socket the proxy takes its workload identity from'),
};

/** One proxyMetadata entry, which the injector also writes as a variable of the same name. */
function metadataProblem(name: string, value: string, cp: ControlPlane): Problem {
  const rule = REFUSED[name] ?? ISTIO_PROXY_ENV.names[name];
  if (rule === undefined) return undefined;
  if ('refuse' in rule) return rule.refuse;
  if (rule.value === undefined) return 'the injector takes it from the downward API, never from proxyMetadata';
  return rule.value(value, { cp } as ContractContext);
}

/**
 * The variables that choose where the proxy connects and whom it trusts (issue 33 §3), each pinned to the control
 * plane: CA_ADDR (and ISTIOD_ADDRESS, which no 1.27 component reads) to its addresses, PILOT_CERT_PROVIDER to what
 * the injector writes, and the trust variables (ISTIO_TRUST_VARIABLES: roots, CA, certificate files, istiod's SAN) to
 * the values the mesh's own proxyMetadata gives them — none by default.
 */
const CONTROL_PLANE_ENV: Readonly<Record<string, EnvRule>> = {
  CA_ADDR: { value: (v, ctx) => controlPlaneAddress('certificate requests (CA)')(v, ctx.cp) },
  ISTIOD_ADDRESS: { value: (v, ctx) => controlPlaneAddress('control plane')(v, ctx.cp) },
  PILOT_CERT_PROVIDER: {
    value: (v, ctx) =>
      ctx.cp.certProviders.includes(v)
        ? undefined
        : `it chooses where the proxy's root certificates come from; the installed mesh writes ${ctx.cp.certProviders.join(' or ')}`,
  },
  ...Object.fromEntries(
    ISTIO_TRUST_VARIABLES.map((name) => [
      name,
      {
        value: (v: string, ctx: ContractContext) =>
          (ctx.cp.metadata[name] ?? []).includes(v) ||
          (name === 'CA_PROVIDER' && v === 'Citadel') ||
          (name === 'FILE_MOUNTED_CERTS' && goBool(v) === false)
            ? undefined
            : `it chooses the roots, the CA, the certificate files or the istiod identity the proxy trusts; the installed mesh ${
                ctx.cp.metadata[name]?.length ? `sets ${ctx.cp.metadata[name].join(' or ')}` : 'sets none'
              }`,
      } satisfies EnvRule,
    ]),
  ),
};

/** istio-proxy (pilot-agent proxy sidecar|router). */
export const ISTIO_PROXY_ENV: EnvContract = {
  names: {
    ...REFUSED,
    POD_NAME: { from: [fieldRef('metadata.name')] },
    POD_NAMESPACE: { from: [fieldRef('metadata.namespace')] },
    INSTANCE_IP: { from: [fieldRef('status.podIP')] },
    SERVICE_ACCOUNT: { from: [fieldRef('spec.serviceAccountName')] },
    HOST_IP: { from: [fieldRef('status.hostIP')] },
    ISTIO_META_NODE_NAME: { from: [fieldRef('spec.nodeName')] },
    ISTIO_CPU_LIMIT: { from: [resourceFieldRef('limits.cpu')] },
    GOMEMLIMIT: { from: [resourceFieldRef('limits.memory')] },
    GOMAXPROCS: { from: [resourceFieldRef('limits.cpu')] },
    PROXY_CONFIG: { value: (v, ctx) => proxyConfigProblem(v, ctx.cp) },
    ISTIO_META_INTERCEPTION_MODE: INTERCEPTION,
    ...CONTROL_PLANE_ENV,
  },
  // ISTIO_META_*, TRUST_DOMAIN, ISTIO_KUBE_APP_PROBERS and the other names pilot-agent registers set metadata, log
  // levels and timeouts: no program, file, control plane or root of the pod's traffic. Names it does not register
  // are inert.
  other: anyLiteral,
};

/**
 * istio-init and istio-validation (pilot-agent istio-iptables): every variable that sets an istio-iptables flag is
 * read with the flags (src/mesh/istio-iptables.ts) and judged there; these change the rules without a flag.
 */
export const ISTIO_IPTABLES_ENV: EnvContract = {
  names: {
    // ISTIO_OUTBOUND_OWNER_GROUPS(_EXCLUDE) and ENVOY_USER are read with the flags (src/mesh/istio-iptables.ts) and
    // refused there as narrowing the redirect.
    ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR: {
      value: (v) =>
        v.trim() === '127.0.0.1/32' ? undefined : 'a wider loopback range would leave more traffic unredirected',
    },
  },
  other: anyLiteral,
};
