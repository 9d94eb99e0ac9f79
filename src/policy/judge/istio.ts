/**
 * Istio's containers, field by field, as istiod 1.27's injection template writes them
 * (manifests/charts/istio-control/istio-discovery/files/injection-template.yaml): what each field may hold and why.
 * The profile's judges (src/mesh/istio.ts) read the image, the arguments and the identity as the programs read them;
 * these contracts refuse every field the template never writes and every value that would make the container run
 * something else, from other files, or as someone else (docs/security.md "Mesh containers, field by field").
 */
import {
  absent,
  anyValue,
  env,
  execHooks,
  httpGetProbe,
  mounts,
  ports,
  securityContext,
  volume,
  type MountRule,
} from './checks.ts';
import { APISERVER_DEFAULTED, SIZING, TIGHTENING, TOKEN_MOUNT } from './common.ts';
import { ISTIO_IPTABLES_ENV, ISTIO_PROXY_ENV } from './istio-env.ts';
import { mountPathProblem } from './paths.ts';
import { ISTIO_TOKEN, mtlsCerts, POD_INFO, rootCertVolume, secretVolume, WORKLOAD_SOCKET } from './istio-volumes.ts';
import type { ContainerContract, ContractContext, FieldCheck, Problem } from './types.ts';

const PRODUCER = "Istio's injector";

/** The status port the template's probes ask (15021; istio-proxy's readiness endpoint). */
const STATUS_PORT = 15021;

/** Envoy's log levels (--proxyLogLevel) and its component levels ("misc:error,upstream:debug"). */
const ENVOY_LEVEL = '(trace|debug|info|warning|warn|error|critical|off)';
/** Istio's own scopes (--log_output_level: "default:info,ads:warn", or a level alone). */
const ISTIO_LEVEL = '(debug|info|warn|error|fatal|none)';
const LIST = (item: string) => new RegExp(`^${item}(,${item})*$`);

/**
 * `pilot-agent proxy` flags the template writes (and the harmless ones pilot-agent also takes), with the grammar of
 * their values: the log levels come from pod annotations that the template pastes unquoted, so a value that is not a
 * level could carry more YAML into the container (a crafted value gave istio-proxy a `command`).
 */
const PROXY_FLAGS_WITH_VALUE: ReadonlyMap<string, RegExp> = new Map([
  ['--domain', /^\$\(POD_NAMESPACE\)\.svc\.[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/],
  ['--proxyLogLevel', new RegExp(`^${ENVOY_LEVEL}$`)],
  ['--proxyComponentLogLevel', new RegExp(`^$|^${LIST(`[a-z0-9_]+:${ENVOY_LEVEL}`).source.slice(1)}`)],
  ['--log_output_level', LIST(`([a-z0-9_.-]+:)?${ISTIO_LEVEL}`)],
  ['--stsPort', /^\d{1,5}$/],
  ['--concurrency', /^\d{1,4}$/],
  ['--serviceCluster', /^[A-Za-z0-9_.-]{1,253}$/],
  ['--outlierLogPath', /^\/[A-Za-z0-9_./-]{1,253}$/],
  ['--log_caller', LIST('[a-z0-9_.-]+')],
  ['--log_stacktrace_level', LIST(`([a-z0-9_.-]+:)?${ISTIO_LEVEL}`)],
  ['--log_target', LIST('(stdout|stderr|/[A-Za-z0-9_./-]+)')],
]);
const PROXY_BOOL_FLAGS = new Set(['--log_as_json', '--profiling']);
/** pilot-agent proxy flags that choose its bootstrap template, mesh configuration file or token plugin: refused. */
const PROXY_REFUSED_FLAGS: Readonly<Record<string, string>> = {
  '--templateFile': "Envoy's bootstrap would be rendered from a template the pod supplies",
  '--meshConfig': 'the mesh configuration (binary, bootstrap, control plane) would come from a file the pod supplies',
  '--tokenManagerPlugin': 'it chooses where the proxy exchanges its identity token',
};

/**
 * `pilot-agent proxy sidecar …` as the template writes it (router/waypoint for gateways are the gateway template's:
 * src/mesh/istio.ts decides which the pod may run).
 */
export const proxyArgs: FieldCheck = (v) => {
  if (!Array.isArray(v) || v.some((a) => typeof a !== 'string')) return 'are not a list of strings';
  const args = v as string[];
  if (args[0] !== 'proxy') return `do not start with "proxy"`;
  for (let i = 2; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (name in PROXY_REFUSED_FLAGS) return `set ${name}: ${PROXY_REFUSED_FLAGS[name]}`;
    if (PROXY_BOOL_FLAGS.has(name)) continue;
    const grammar = PROXY_FLAGS_WITH_VALUE.get(name);
    if (grammar) {
      const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined || !grammar.test(value))
        return `give ${name} the value ${JSON.stringify(value ?? null)}, not one pilot-agent takes there`;
      continue;
    }
    return `hold ${JSON.stringify(arg)}, which the injector never writes`;
  }
  return undefined;
};

const PROXY_MOUNTS: readonly MountRule[] = [
  TOKEN_MOUNT,
  { name: 'workload-socket', mountPath: '/var/run/secrets/workload-spiffe-uds', volume: WORKLOAD_SOCKET },
  // Istio's SPIRE template (samples/security/spire/istio-spire-config.yaml) mounts it at /run: the same directory.
  { name: 'workload-socket', mountPath: '/run/secrets/workload-spiffe-uds', volume: WORKLOAD_SOCKET },
  { name: 'credential-socket', mountPath: '/var/run/secrets/credential-uds', volume: volume.emptyDir() },
  { name: 'workload-certs', mountPath: '/var/run/secrets/workload-spiffe-credentials', volume: volume.emptyDir() },
  {
    name: 'gke-workload-certificate',
    mountPath: '/var/run/secrets/workload-spiffe-credentials',
    readOnly: true,
    volume: volume.equals({ csi: { driver: 'workloadcertificates.security.cloud.google.com' } }),
  },
  { name: 'istiod-ca-cert', mountPath: '/var/run/secrets/istio', volume: volume.where(rootCertVolume) },
  {
    name: 'istio-ca-crl',
    mountPath: '/var/run/secrets/istio/crl',
    volume: volume.equals({ configMap: { name: 'istio-ca-crl', optional: true } }),
  },
  { name: 'istio-data', mountPath: '/var/lib/istio/data', volume: volume.emptyDir() },
  // The agent writes Envoy's bootstrap here; a pod-supplied volume under this name would hand Envoy the pod's own.
  { name: 'istio-envoy', mountPath: '/etc/istio/proxy', volume: volume.emptyDir('Memory') },
  { name: 'istio-token', mountPath: '/var/run/secrets/tokens', volume: ISTIO_TOKEN },
  { name: 'istio-certs', mountPath: '/etc/certs/', readOnly: true, volume: volume.where(mtlsCerts) },
  // pilot-agent reads the pod's annotations here, proxy.istio.io/config among them: only the downward API may fill it.
  { name: 'istio-podinfo', mountPath: '/etc/istio/pod', volume: POD_INFO },
  {
    name: 'lightstep-certs',
    mountPath: '/etc/lightstep',
    readOnly: true,
    volume: volume.where(secretVolume("the tracer's roots", () => 'lightstep.cacert')),
  },
];

/**
 * sidecar.istio.io/userVolumeMount: mounts the pod asks for in istio-proxy (certificates for egress TLS, …), allowed
 * where they cannot shadow what the proxy runs or reads (src/policy/judge/paths.ts), without sub-paths or
 * propagation, and never of the node's files.
 */
export function userMount(m: Record<string, unknown>, ctx: ContractContext): Problem {
  const path = m.mountPath as string;
  if (m.name === 'custom-bootstrap-volume')
    return 'mounts custom-bootstrap-volume (sidecar.istio.io/bootstrapOverride): Envoy would start from a bootstrap the pod supplies';
  const where = mountPathProblem(path);
  if (where) return `mounts volume ${m.name} at ${where}`;
  const extra = Object.keys(m).filter((k) => !['name', 'mountPath', 'readOnly'].includes(k) && m[k] !== undefined);
  if (extra.length) return `mounts volume ${m.name} with ${extra.join(', ')}, which change what lands at ${path}`;
  const vol = ctx.pod.volumes.get(m.name as string);
  if (!vol) return `mounts volume ${m.name}, which the pod does not have`;
  if (vol.hostPath !== undefined) return `mounts volume ${m.name}, a hostPath: the node's files`;
  return undefined;
}

const proxyMounts = mounts({ rules: PROXY_MOUNTS, extra: userMount });

/**
 * istio-proxy's security context as the template writes it (not TPROXY, no NET_BIND_SERVICE, not privileged). The
 * gateway template (files/gateway-injection-template.yaml) writes only the proxy's identity: a Deployment written as
 * Istio's docs show one (`image: auto`, nothing else) keeps just that; a gateway is the pod's only container, so
 * there is no redirect for its hardening to protect (the istio/gateway chart adds the sidecar's anyway).
 */
const sidecarSecurity = (ctx: ContractContext) => ({
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  privileged: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: ctx.id.proxyUid,
  runAsGroup: ctx.id.proxyGid ?? ctx.id.proxyUid,
});
const proxySecurity = securityContext(
  [
    sidecarSecurity,
    (ctx) =>
      ctx.pod.gateway?.alone
        ? { runAsUser: ctx.id.proxyUid, runAsGroup: ctx.id.proxyGid ?? ctx.id.proxyUid }
        : sidecarSecurity(ctx),
  ],
  TIGHTENING,
);

/**
 * pilot-agent's own commands as the template's hooks run them: wait for Envoy, drain it. The drain hook's port is the
 * pod's `status.sidecar.istio.io/port`, else the chart's `global.proxy.statusPort` (15020 by default; any port an
 * operator or a pod chooses): `pilot-agent request` sends one HTTP POST to that port on the pod's own loopback, so its
 * value changes only where the drain request lands inside the pod.
 */
const PROXY_HOOKS = execHooks([
  ['pilot-agent', 'wait'],
  [
    'pilot-agent',
    'request',
    /^--debug-port=(6553[0-5]|655[0-2]\d|65[0-4]\d\d|6[0-4]\d{3}|[1-5]?\d{1,4})$/,
    'POST',
    'drain',
  ],
]);

export const ISTIO_PROXY: ContainerContract = {
  producer: PRODUCER,
  fields: {
    image: anyValue('judged by the profile: a repository of the mesh'),
    command: absent('it replaces pilot-agent, the image entrypoint'),
    args: proxyArgs,
    env: env(ISTIO_PROXY_ENV),
    ports,
    lifecycle: PROXY_HOOKS,
    readinessProbe: httpGetProbe(['/healthz/ready'], () => [STATUS_PORT]),
    startupProbe: httpGetProbe(['/healthz/ready'], () => [STATUS_PORT]),
    securityContext: proxySecurity,
    volumeMounts: proxyMounts,
    restartPolicy: anyValue('placed by the identify step: Always only as a native sidecar'),
    ...APISERVER_DEFAULTED,
    ...SIZING,
  },
};

/** istio-init (init mode) and istio-validation (CNI mode) share the template's command line and environment. */
const iptablesFields = {
  image: anyValue('judged by the profile: a repository of the mesh'),
  command: anyValue('judged by the profile: pilot-agent or nothing'),
  args: anyValue('read by the profile as istio-iptables reads them'),
  env: env(ISTIO_IPTABLES_ENV),
  volumeMounts: mounts({ rules: [TOKEN_MOUNT] }),
  ...APISERVER_DEFAULTED,
  ...SIZING,
};

export const ISTIO_INIT: ContainerContract = {
  producer: PRODUCER,
  fields: {
    ...iptablesFields,
    // Root with NET_ADMIN and NET_RAW to write the rules; the template's `privileged` value may make it privileged.
    securityContext: securityContext(
      [
        () => ({
          allowPrivilegeEscalation: false,
          privileged: false,
          capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
          readOnlyRootFilesystem: false,
          runAsGroup: 0,
          runAsNonRoot: false,
          runAsUser: 0,
        }),
        () => ({
          allowPrivilegeEscalation: true,
          privileged: true,
          capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
          readOnlyRootFilesystem: false,
          runAsGroup: 0,
          runAsNonRoot: false,
          runAsUser: 0,
        }),
      ],
      TIGHTENING,
    ),
  },
};

export const ISTIO_VALIDATION: ContainerContract = {
  producer: PRODUCER,
  fields: {
    ...iptablesFields,
    // It checks the rules from the proxy's identity: 127.0.0.6 is redirected only for it.
    securityContext: securityContext(
      [
        (ctx) => ({
          allowPrivilegeEscalation: false,
          privileged: false,
          capabilities: { drop: ['ALL'] },
          readOnlyRootFilesystem: true,
          runAsGroup: ctx.id.proxyGid ?? ctx.id.proxyUid,
          runAsNonRoot: true,
          runAsUser: ctx.id.proxyUid,
        }),
      ],
      TIGHTENING,
    ),
  },
};
