/**
 * The repair controller's flags for the node quarantine and the unmeshed-pod sweep: their declarations, help text and
 * validation into settings, so `meshgate repair-controller` (src/cli/repair-controller.ts) stays a thin entry point.
 * Every default is chosen here and says why. Throws UsageError (exit 2) naming the flag.
 */
import { UsageError } from '../cli/args.ts';
import { parseDuration } from '../agent/duration.ts';
import type { QuarantineSettings } from './quarantine-run.ts';
import type { UnmeshedSettings } from './unmeshed-run.ts';

export const QUARANTINE_FLAGS = {
  'withdraw-verdicts': { type: 'string', default: 'false' },
  'withdraw-after': { type: 'string', default: '3' },
  'withdraw-window': { type: 'string', default: '10m' },
  'withdraw-taint': { type: 'string', default: 'false' },
  'hold-off': { type: 'string', default: '5m' },
  'max-hold-off': { type: 'string', default: '1h' },
  'max-withdrawals-per-hour': { type: 'string', default: '3' },
  'quarantine-interval': { type: 'string', default: '10s' },
  'probe-namespace': { type: 'string' },
  'probe-validator-image': { type: 'string' },
  'probe-proxy-image': { type: 'string' },
  'probe-timeout': { type: 'string', default: '2m' },
  'evict-unmeshed': { type: 'string', default: 'false' },
  'report-unmeshed': { type: 'string', default: 'false' },
  'max-evictions-per-minute': { type: 'string', default: '10' },
  'unmeshed-sweep-interval': { type: 'string', default: '5m' },
  'webhook-config': { type: 'string', default: 'meshgate' },
} as const;

/** The help lines of the quarantine and unmeshed-pod flags. */
export const QUARANTINE_USAGE = `node quarantine (docs/repair.md):
  --withdraw-verdicts BOOL        withdraw a node's verification (quarantine mark, label false, condition False,
                                  an Event) when validation fails for --withdraw-after pods on it within
                                  --withdraw-window; give it back after its hold, a fresh node agent verdict and a
                                  passing probe pod (default false; the chart's repairController.withdrawVerdicts)
  --withdraw-after N              distinct failed pods on one node that withdraw it (default 3)
  --withdraw-window DURATION      (default 10m)
  --withdraw-taint BOOL           also add the taint meshgate.io/cni-unverified:NoSchedule (default false)
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
  --evict-unmeshed BOOL           evict pods of opted-in namespaces running without meshgate's redirect, so their
                                  controllers recreate them through the webhook (Eviction API: PodDisruptionBudgets
                                  hold; bare pods and pods meshgate would refuse are only reported) (default false)
  --report-unmeshed BOOL          only an Event on each such pod (default false; implied by --evict-unmeshed)
  --max-evictions-per-minute N    (default 10)
  --unmeshed-sweep-interval DURATION  full sweep period; a namespace whose labels change is swept at once (default 5m)
  --webhook-config NAME           meshgate's MutatingWebhookConfiguration, whose selectors say which namespaces
                                  are opted in (default meshgate)
`;

type Values = { [K in keyof typeof QUARANTINE_FLAGS]?: string };

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
  if (ms === undefined) throw new UsageError(`--${flag}: "${v}" is not a duration like 30s, 5m or 1h`);
  return ms;
}

/** Node names, namespaces and images here end up in pod specs: refuse what the apiserver would refuse later. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function quarantineSettings(f: Values, meshNamespace: string): QuarantineSettings | undefined {
  if (!bool('withdraw-verdicts', f['withdraw-verdicts']!)) return undefined;
  const holdOff = {
    baseMs: duration('hold-off', f['hold-off']!),
    maxMs: duration('max-hold-off', f['max-hold-off']!),
    maxPerHour: count('max-withdrawals-per-hour', f['max-withdrawals-per-hour']!, 1),
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
    threshold: count('withdraw-after', f['withdraw-after']!, 1),
    windowMs: duration('withdraw-window', f['withdraw-window']!),
    holdOff,
    taint: bool('withdraw-taint', f['withdraw-taint']!),
    intervalMs: duration('quarantine-interval', f['quarantine-interval']!),
    probe: {
      namespace,
      validatorImage: f['probe-validator-image'],
      proxyImage: f['probe-proxy-image'],
      timeoutMs: duration('probe-timeout', f['probe-timeout']!),
    },
  };
}

export function unmeshedSettings(f: Values): UnmeshedSettings | undefined {
  const evict = bool('evict-unmeshed', f['evict-unmeshed']!);
  const report = bool('report-unmeshed', f['report-unmeshed']!);
  const maxEvictionsPerMinute = count('max-evictions-per-minute', f['max-evictions-per-minute']!, 1);
  const sweepIntervalMs = duration('unmeshed-sweep-interval', f['unmeshed-sweep-interval']!);
  const webhookConfig = f['webhook-config']!;
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(webhookConfig))
    throw new UsageError(`--webhook-config: "${webhookConfig}" is not an object name`);
  return evict || report ? { evict, maxEvictionsPerMinute, sweepIntervalMs, webhookConfig } : undefined;
}
