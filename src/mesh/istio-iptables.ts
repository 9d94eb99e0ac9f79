/**
 * What Istio's `istio-iptables` (run by istio-init and istio-validation as `pilot-agent istio-iptables …`) will
 * really do, read the way it reads its inputs (tools/istio-iptables/pkg/cmd/root.go at Istio 1.27): every flag but
 * envoy-port and the log flags can also come from an environment variable of the upper-cased name (pkg/flag
 * BindEnv), and a flag given on the command line overrides the variable. A look-alike that sets `DRY_RUN=true` or leaves out `-i '*'` redirects
 * nothing while looking like istio-init, so both sources are read before anything is judged.
 */
import type { Container, EnvVar } from '../contract/pod.ts';
import { readFlags, goBool, type PflagSpec } from './flags.ts';

const SPEC: PflagSpec = {
  long: {
    'envoy-port': 'string',
    'inbound-capture-port': 'string',
    'inbound-tunnel-port': 'string',
    'proxy-uid': 'string',
    'proxy-gid': 'string',
    'istio-inbound-interception-mode': 'string',
    'istio-inbound-ports': 'string',
    'istio-local-exclude-ports': 'string',
    'istio-exclude-interfaces': 'string',
    'istio-service-cidr': 'string',
    'istio-service-exclude-cidr': 'string',
    'istio-outbound-ports': 'string',
    'istio-local-outbound-ports-exclude': 'string',
    'kube-virt-interfaces': 'string',
    'istio-inbound-tproxy-mark': 'string',
    'istio-inbound-tproxy-route-table': 'string',
    'dry-run': 'bool',
    'iptables-trace-logging': 'bool',
    'iptables-probe-port': 'string',
    'probe-timeout': 'string',
    'skip-rule-apply': 'bool',
    'run-validation': 'bool',
    'redirect-dns': 'bool',
    'drop-invalid': 'bool',
    'dual-stack': 'bool',
    'capture-all-dns': 'bool',
    'network-namespace': 'string',
    'cni-mode': 'bool',
    reconcile: 'bool',
    'cleanup-only': 'bool',
    'force-apply': 'bool',
    'native-nftables': 'bool',
    log_output_level: 'string',
    log_as_json: 'bool',
    log_caller: 'string',
    log_stacktrace_level: 'string',
    log_target: 'list',
    log_rotate: 'string',
    'iptables-version': 'string',
    'ip6tables-version': 'string',
  },
  short: {
    p: 'envoy-port',
    z: 'inbound-capture-port',
    e: 'inbound-tunnel-port',
    u: 'proxy-uid',
    g: 'proxy-gid',
    m: 'istio-inbound-interception-mode',
    b: 'istio-inbound-ports',
    d: 'istio-local-exclude-ports',
    c: 'istio-exclude-interfaces',
    i: 'istio-service-cidr',
    x: 'istio-service-exclude-cidr',
    q: 'istio-outbound-ports',
    o: 'istio-local-outbound-ports-exclude',
    k: 'kube-virt-interfaces',
    t: 'istio-inbound-tproxy-mark',
    r: 'istio-inbound-tproxy-route-table',
    n: 'dry-run',
  },
};

/**
 * The flags root.go binds to an environment variable with pkg/flag BindEnv, in the order it binds them: the
 * variable is the flag's name upper-cased with `-` → `_`. envoy-port is bound with flag.Bind (no variable), and the
 * log flags are pilot-agent's, read from the command line only.
 */
const ENV_BOUND = [
  'inbound-capture-port',
  'inbound-tunnel-port',
  'proxy-uid',
  'proxy-gid',
  'istio-inbound-interception-mode',
  'istio-inbound-ports',
  'istio-local-exclude-ports',
  'istio-exclude-interfaces',
  'istio-service-cidr',
  'istio-service-exclude-cidr',
  'istio-outbound-ports',
  'istio-local-outbound-ports-exclude',
  'kube-virt-interfaces',
  'istio-inbound-tproxy-mark',
  'istio-inbound-tproxy-route-table',
  'dry-run',
  'iptables-probe-port',
  'probe-timeout',
  'skip-rule-apply',
  'run-validation',
  'redirect-dns',
  'drop-invalid',
  'dual-stack',
  'capture-all-dns',
  'network-namespace',
  'cni-mode',
  'reconcile',
  'cleanup-only',
  'force-apply',
  'native-nftables',
] as const;

/** A second variable for a flag (pkg/flag AdditionalEnv), read right after the flag's own, so it wins over it. */
const EXTRA_ENV: Readonly<Record<string, string>> = {
  'redirect-dns': 'ISTIO_META_DNS_CAPTURE',
  'drop-invalid': 'INVALID_DROP',
  'dual-stack': 'ISTIO_DUAL_STACK',
};

/** Each bound flag with the variables that set it, in the order istio-iptables reads them: the last one set wins. */
const FLAG_ENV: ReadonlyArray<readonly [string, readonly string[]]> = ENV_BOUND.map((flag) => [
  flag,
  [flag.toUpperCase().replaceAll('-', '_'), ...(EXTRA_ENV[flag] ? [EXTRA_ENV[flag]] : [])],
]);

/** The defaults istio-iptables starts from (root.go); what the template leaves out falls back to these. */
const DEFAULTS: Record<string, string> = {
  'envoy-port': '15001',
  'inbound-capture-port': '15006',
  'inbound-tunnel-port': '15008',
  'istio-inbound-interception-mode': '',
  'istio-inbound-ports': '',
  'istio-service-cidr': '',
  'iptables-probe-port': '15002',
};

/**
 * Variables istio-iptables reads with no flag (tools/common/config FillConfigFromEnvironment, constants.go), each
 * with why setting it narrows the redirect, or undefined when its value does not. ENVOY_USER names the user whose
 * UID is exempt when -u is unset, looked up in the image's /etc/passwd, which admission cannot read.
 */
const ENV_ONLY: ReadonlyArray<
  readonly [string, (value: string, t: (flag: string) => string | undefined) => string | undefined]
> = [
  [
    'ISTIO_OUTBOUND_OWNER_GROUPS',
    (v) => (v === '*' ? undefined : 'only traffic of the groups listed there would be redirected (must be "*")'),
  ],
  [
    'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE',
    (v) =>
      v.split(',').every((g) => g === '') ? undefined : 'traffic of the groups listed there would bypass the proxy',
  ],
  [
    'ENVOY_USER',
    (v, t) =>
      (t('proxy-uid') ?? '') !== '' || v === 'istio-proxy'
        ? undefined
        : "with -u unset, the UID of that user in the image's /etc/passwd would be exempt, which admission cannot read",
  ],
];

export interface IstioIptables {
  /**
   * Effective value of each flag (flag > environment > default); `undefined` value = set from a source we cannot
   * read.
   */
  get(name: string): string | undefined;
  bool(name: string): boolean;
  /** Problems reading the command line: unknown flags, missing values, values we cannot see. */
  problems: string[];
  /** Variables without a flag that narrow the redirect (ENV_ONLY), each a sentence naming the variable. */
  narrowing: string[];
}

/**
 * Reads `pilot-agent istio-iptables …` from a container: its env, then its args (after the `istio-iptables`
 * word).
 */
export function readIstioIptables(c: Container): IstioIptables {
  const problems: string[] = [];
  const effective = new Map<string, string | undefined>(Object.entries(DEFAULTS));
  // The process environment the kubelet builds: of several variables with one name, the last one.
  const env = new Map<string, EnvVar>();
  for (const e of c.env ?? []) env.set(e.name, e);
  for (const [flag, names] of FLAG_ENV) {
    for (const name of names) {
      const e = env.get(name);
      if (e === undefined) continue;
      if (e.value === undefined && e.valueFrom !== undefined) effective.set(flag, undefined);
      else effective.set(flag, e.value ?? '');
    }
  }
  const args = c.args ?? [];
  const read = readFlags(args[0] === 'istio-iptables' ? args.slice(1) : args, SPEC);
  for (const [k, v] of read.values) effective.set(k, v);
  if (read.unknown.length)
    problems.push(`unknown flags ${read.unknown.join(' ')} (istio-iptables would exit with an error)`);
  if (read.missingValue.length) problems.push(`flag ${read.missingValue.join(', ')} has no value`);
  if (read.positionals.length) problems.push(`unexpected arguments ${read.positionals.join(' ')}`);
  const narrowing: string[] = [];
  for (const [name, narrows] of ENV_ONLY) {
    const e = env.get(name);
    if (e === undefined) continue;
    const flag = (f: string) => effective.get(f);
    if (e.value === undefined && e.valueFrom !== undefined) {
      // Unreadable: a problem when some value of it would narrow the redirect (one no template writes).
      if (narrows('\0', flag)) problems.push(`env ${name} is set from valueFrom, which admission cannot read`);
      continue;
    }
    const why = narrows(e.value ?? '', flag);
    if (why) narrowing.push(`env ${name} is "${e.value ?? ''}": ${why}`);
  }
  return {
    narrowing,
    get: (name) => effective.get(name),
    bool: (name) => goBool(effective.get(name) ?? 'false') === true,
    problems: [
      ...problems,
      ...[...effective]
        .filter(([, v]) => v === undefined)
        .map(([k]) => `${k} is set from an environment variable's valueFrom, which admission cannot read`),
    ],
  };
}
