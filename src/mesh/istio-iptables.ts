/**
 * What Istio's `istio-iptables` (run by istio-init and istio-validation as `pilot-agent istio-iptables …`) will
 * really do, read the way it reads its inputs (tools/istio-iptables/pkg/cmd/root.go at Istio 1.27): every flag can
 * also come from an environment variable of the upper-cased name (pkg/flag BindEnv), and a flag given on the
 * command line overrides the variable. A look-alike that sets `DRY_RUN=true` or leaves out `-i '*'` redirects
 * nothing while looking like istio-init, so both sources are read before anything is judged.
 */
import type { Container } from '../pod/types.ts';
import { readFlags, goBool, type FlagSpec } from './flags.ts';

const SPEC: FlagSpec = {
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

/** Environment variables that set a flag besides `NAME_IN_UPPER_CASE` (pkg/flag AdditionalEnv in root.go). */
const EXTRA_ENV: Record<string, string> = {
  ISTIO_META_DNS_CAPTURE: 'redirect-dns',
  INVALID_DROP: 'drop-invalid',
  ISTIO_DUAL_STACK: 'dual-stack',
};

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

export interface IstioIptables {
  /**
   * Effective value of each flag (flag > environment > default); `undefined` value = set from a source we cannot
   * read.
   */
  get(name: string): string | undefined;
  bool(name: string): boolean;
  /** Problems reading the command line: unknown flags, missing values, values we cannot see. */
  problems: string[];
}

/**
 * Reads `pilot-agent istio-iptables …` from a container: its env, then its args (after the `istio-iptables`
 * word).
 */
export function readIstioIptables(c: Container): IstioIptables {
  const problems: string[] = [];
  const effective = new Map<string, string | undefined>(Object.entries(DEFAULTS));
  for (const e of c.env ?? []) {
    const flag =
      EXTRA_ENV[e.name] ?? Object.keys(SPEC.long).find((f) => f.toUpperCase().replace(/[-.]/g, '_') === e.name);
    if (!flag) continue;
    if (e.value === undefined && e.valueFrom !== undefined) effective.set(flag, undefined);
    else effective.set(flag, e.value ?? '');
  }
  const args = c.args ?? [];
  const read = readFlags(args[0] === 'istio-iptables' ? args.slice(1) : args, SPEC);
  for (const [k, v] of read.values) effective.set(k, v);
  if (read.unknown.length)
    problems.push(`unknown flags ${read.unknown.join(' ')} (istio-iptables would exit with an error)`);
  if (read.missingValue.length) problems.push(`flag ${read.missingValue.join(', ')} has no value`);
  if (read.positionals.length) problems.push(`unexpected arguments ${read.positionals.join(' ')}`);
  return {
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
