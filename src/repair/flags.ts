/**
 * The repair controller's flags for the node quarantine and the unmeshed-pod sweep: their declarations, help text and
 * validation into settings, so `meshgate repair-controller` (src/cli/repair-controller.ts) stays a thin entry point.
 * Every default is chosen here and says why. Throws UsageError (exit 2) naming the flag.
 */
import { type parseFlags, UsageError } from '../util/args.ts';
import { parseDuration } from '../util/duration.ts';
import type { QuarantineSettings } from './quarantine/run.ts';
import type { UnmeshedSettings } from './unmeshed/run.ts';
import { DNS_LABEL } from '../util/names.ts';

const BOOL = ['true', 'false'] as const;
/** --unmeshed-pods. */
export const UNMESHED_MODES = ['off', 'report', 'evict'] as const;

/**
 * Named like the chart's values they come from (repairController.quarantine.failures → --quarantine-failures, …):
 * test/chart/flag-names.test.ts holds every value the chart passes as a flag to that rule.
 */
export const QUARANTINE_FLAGS = {
  'withdraw-verdicts': { type: 'string', default: 'false', complete: BOOL },
  'quarantine-failures': { type: 'string', default: '3' },
  'quarantine-window': { type: 'string', default: '10m' },
  'quarantine-taint': { type: 'string', default: 'false', complete: BOOL },
  'hold-off': { type: 'string', default: '5m' },
  'max-hold-off': { type: 'string', default: '1h' },
  'max-withdrawals-per-hour': { type: 'string', default: '3' },
  'quarantine-interval': { type: 'string', default: '10s' },
  'probe-namespace': { type: 'string' },
  'probe-validator-image': { type: 'string' },
  'probe-proxy-image': { type: 'string' },
  'probe-timeout': { type: 'string', default: '2m' },
  'unmeshed-pods': { type: 'string', default: 'off', complete: UNMESHED_MODES },
  'max-evictions-per-minute': { type: 'string', default: '10' },
  'unmeshed-sweep-interval': { type: 'string', default: '5m' },
  'webhook-config': { type: 'string', default: 'meshgate' },
  'policy-reports': { type: 'string', default: 'true', complete: BOOL },
} as const;

/** The help lines of the quarantine and unmeshed-pod flags. */
export const QUARANTINE_USAGE = `node quarantine (docs/repair.md):
  --withdraw-verdicts BOOL        withdraw a node's verification (quarantine mark, label false, condition False,
                                  an Event) when validation fails for --quarantine-failures pods on it within
                                  --quarantine-window; give it back after its hold, a fresh node agent verdict and
                                  a passing probe pod (default false; the chart's repairController.withdrawVerdicts)
  --quarantine-failures N         distinct failed pods on one node that withdraw it (default 3)
  --quarantine-window DURATION    (default 10m)
  --quarantine-taint BOOL         also add the taint meshgate.io/cni-unverified:NoSchedule (default false)
  --hold-off DURATION             a withdrawn node's first hold; doubles with each withdrawal within the hour and
                                  each failed probe (default 5m)
  --max-hold-off DURATION         (default 1h)
  --max-withdrawals-per-hour N    a node withdrawn this often within an hour is held until the first of them is an
                                  hour old (default 3)
  --quarantine-interval DURATION  how often withdrawn nodes are re-judged (default 10s)
  --probe-namespace NS            where probe pods run (default: the config's meshNamespace)
  --probe-validator-image IMAGE   the probe's validator image (default: the config's validator.image)
  --probe-proxy-image IMAGE       the probe's proxy stand-in, run with its own entrypoint (default: the validator's
                                  image running Node.js that exits at once)
  --probe-timeout DURATION        a probe that has not finished by then proves nothing (default 2m)

unmeshed pods in opted-in namespaces:
  --unmeshed-pods MODE            pods of opted-in namespaces running without meshgate's redirect: off | report (a
                                  Warning Event on each) | evict (the Eviction API, so their controllers recreate
                                  them through the webhook; PodDisruptionBudgets hold; bare pods and pods meshgate
                                  would refuse are only reported) (default off)
  --max-evictions-per-minute N    (default 10)
  --unmeshed-sweep-interval DURATION  full sweep period; a namespace whose labels change is swept at once (default 5m)
  --webhook-config NAME           meshgate's MutatingWebhookConfiguration, whose selectors say which namespaces
                                  are opted in (default meshgate)

audit findings:
  --policy-reports BOOL           publish the pods admitted below enforce that enforce would refuse as one
                                  wg-policy PolicyReport per namespace (wgpolicyk8s.io/v1alpha2, named meshgate:
                                  kubectl get polr -A), written by the leader (default true; without the CRD,
                                  nothing is written and the log says so)
`;

/** The parsed flags: those with a default above are typed `string`, the rest `string | undefined`. */
type Values = ReturnType<typeof parseFlags<typeof QUARANTINE_FLAGS>>['values'];

function bool(flag: string, v: string): boolean {
  if (v !== 'true' && v !== 'false') throw new UsageError(`--${flag}: "${v}" is not true or false`);
  return v === 'true';
}

function count(flag: string, v: string, min: number): number {
  if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`--${flag}: "${v}" is not a whole number >= ${min}`);
  return Number(v);
}

function duration(flag: string, v: string): number {
  const ms = parseDuration(v);
  if (typeof ms === 'string') throw new UsageError(`--${flag}: ${ms}`);
  return ms;
}

/**
 * The node quarantine's settings, or undefined when it is off. Node names, namespaces and images here end up in pod
 * specs: what the apiserver would refuse later is refused now.
 */
export function quarantineSettings(f: Values, meshNamespace: string): QuarantineSettings | undefined {
  if (!bool('withdraw-verdicts', f['withdraw-verdicts'])) return undefined;
  const holdOff = {
    baseMs: duration('hold-off', f['hold-off']),
    maxMs: duration('max-hold-off', f['max-hold-off']),
    maxPerHour: count('max-withdrawals-per-hour', f['max-withdrawals-per-hour'], 1),
  };
  if (holdOff.maxMs < holdOff.baseMs)
    throw new UsageError(`--max-hold-off (${f['max-hold-off']}) must be at least --hold-off (${f['hold-off']})`);
  const namespace = f['probe-namespace'] ?? meshNamespace;
  if (!DNS_LABEL.test(namespace) || namespace.length > 63)
    throw new UsageError(`--probe-namespace: "${namespace}" is not a namespace name`);
  for (const k of ['probe-validator-image', 'probe-proxy-image'] as const) {
    const v = f[k];
    if (v !== undefined && (v.trim() === '' || /\s/.test(v)))
      throw new UsageError(`--${k}: "${v}" is not an image reference`);
  }
  return {
    threshold: count('quarantine-failures', f['quarantine-failures'], 1),
    windowMs: duration('quarantine-window', f['quarantine-window']),
    holdOff,
    taint: bool('quarantine-taint', f['quarantine-taint']),
    intervalMs: duration('quarantine-interval', f['quarantine-interval']),
    probe: {
      namespace,
      validatorImage: f['probe-validator-image'],
      proxyImage: f['probe-proxy-image'],
      timeoutMs: duration('probe-timeout', f['probe-timeout']),
    },
  };
}

export function unmeshedSettings(f: Values): UnmeshedSettings | undefined {
  const mode = f['unmeshed-pods'];
  if (!(UNMESHED_MODES as readonly string[]).includes(mode))
    throw new UsageError(`--unmeshed-pods: "${mode}" is not one of ${UNMESHED_MODES.join(', ')}`);
  const evict = mode === 'evict';
  const report = mode === 'report';
  const maxEvictionsPerMinute = count('max-evictions-per-minute', f['max-evictions-per-minute'], 1);
  const sweepIntervalMs = duration('unmeshed-sweep-interval', f['unmeshed-sweep-interval']);
  const webhookConfig = f['webhook-config'];
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(webhookConfig))
    throw new UsageError(`--webhook-config: "${webhookConfig}" is not an object name`);
  return evict || report ? { evict, maxEvictionsPerMinute, sweepIntervalMs, webhookConfig } : undefined;
}

/**
 * Names of earlier releases, still taken so a controller started with them keeps working (removed in a later
 * release); each is rewritten to today's name with a warning. The unmeshed pair became one mode flag:
 * --evict-unmeshed=true is --unmeshed-pods=evict, --report-unmeshed=true is --unmeshed-pods=report (evict wins),
 * either =false says nothing.
 */
const RENAMED: Readonly<Record<string, string>> = {
  'withdraw-after': 'quarantine-failures',
  'withdraw-window': 'quarantine-window',
  'withdraw-taint': 'quarantine-taint',
};
const UNMESHED_SWITCHES: Readonly<Record<string, 'report' | 'evict'>> = {
  'report-unmeshed': 'report',
  'evict-unmeshed': 'evict',
};

export function rewriteDeprecatedFlags(argv: readonly string[]): { argv: string[]; warnings: string[] } {
  const out: string[] = [];
  const warnings: string[] = [];
  let unmeshed: 'report' | 'evict' | undefined;
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    const name = m?.[1];
    if (!m || !name || !(name in RENAMED || name in UNMESHED_SWITCHES)) {
      out.push(argv[i]);
      continue;
    }
    const inline = m[2] !== undefined;
    const value = inline ? m[2] : argv[i + 1];
    if (!inline) i++;
    if (name in RENAMED) {
      warnings.push(`--${name} is deprecated: use --${RENAMED[name]}`);
      out.push(`--${RENAMED[name]}=${value ?? ''}`);
      continue;
    }
    const mode = UNMESHED_SWITCHES[name];
    warnings.push(`--${name} is deprecated: use --unmeshed-pods=${mode}`);
    if (bool(name, value ?? '') && unmeshed !== 'evict') unmeshed = mode;
  }
  if (unmeshed) out.push(`--unmeshed-pods=${unmeshed}`);
  return { argv: out, warnings };
}

/** --policy-reports. */
export function policyReportsSetting(f: Values): boolean {
  return bool('policy-reports', f['policy-reports']);
}
