/**
 * What the apiserver itself measured: its webhook histogram (apiserver_admission_webhook_admission_duration_seconds,
 * per webhook, CREATE, buckets 5 ms, 25 ms, 100 ms, …) read from /metrics before and after a burst, and each pod
 * create's own span from its audit log (requestReceivedTimestamp to stageTimestamp at ResponseComplete, in µs): the
 * histogram's first bucket is 5 ms, too coarse for a 1 ms target, while the audit log times every create exactly.
 */
import { readFileSync } from 'node:fs';
import type { ControlPlane } from '../../test/e2e/harness/index.ts';

/** Cumulative bucket counts (le → count), sum and count of one webhook's CREATE calls. */
export interface WebhookHistogram {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

const METRIC = 'apiserver_admission_webhook_admission_duration_seconds';

/** Every webhook's CREATE histogram (type admit and validating, not rejected and rejected together), by name. */
export async function webhookHistograms(cp: ControlPlane): Promise<Map<string, WebhookHistogram>> {
  const r = await cp.kubectl(['get', '--raw', '/metrics']);
  if (r.code !== 0) throw new Error(`reading the apiserver's /metrics failed: ${r.stderr}`);
  const out = new Map<string, WebhookHistogram>();
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith(METRIC) || !line.includes('operation="CREATE"')) continue;
    const name = /name="([^"]*)"/.exec(line)?.[1];
    if (!name) continue;
    const h = out.get(name) ?? { buckets: new Map(), sum: 0, count: 0 };
    out.set(name, h);
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith(`${METRIC}_bucket`)) {
      const le = /le="([^"]*)"/.exec(line)![1];
      const key = le === '+Inf' ? Infinity : Number(le);
      h.buckets.set(key, (h.buckets.get(key) ?? 0) + value);
    } else if (line.startsWith(`${METRIC}_sum`)) h.sum += value;
    else if (line.startsWith(`${METRIC}_count`)) h.count += value;
  }
  return out;
}

export interface WebhookFigures {
  calls: number;
  meanMs: number;
  /** Share of calls the apiserver counted at or under 5 ms (its first bucket). */
  within5msPct: number;
  /** histogram_quantile(0.99) as Prometheus computes it: linear within the bucket that holds the 99th call. */
  p99Ms: number;
}

/** The calls between two readings. */
export function webhookDelta(before: WebhookHistogram | undefined, after: WebhookHistogram): WebhookFigures {
  const count = after.count - (before?.count ?? 0);
  const sum = after.sum - (before?.sum ?? 0);
  const les = [...after.buckets.keys()].sort((a, b) => a - b);
  const cum = les.map((le) => after.buckets.get(le)! - (before?.buckets.get(le) ?? 0));
  const rank = 0.99 * count;
  let p99 = NaN;
  for (let i = 0; i < les.length; i++) {
    if (cum[i] >= rank) {
      const lo = i === 0 ? 0 : les[i - 1];
      const below = i === 0 ? 0 : cum[i - 1];
      p99 = Number.isFinite(les[i]) ? lo + (les[i] - lo) * ((rank - below) / Math.max(1, cum[i] - below)) : lo;
      break;
    }
  }
  const le5 = les.indexOf(0.005);
  return {
    calls: count,
    meanMs: count > 0 ? (sum / count) * 1000 : NaN,
    within5msPct: count > 0 && le5 >= 0 ? (cum[le5] / count) * 100 : NaN,
    p99Ms: p99 * 1000,
  };
}

/** An audit policy that records pod creates (Metadata level, one event at ResponseComplete) and nothing else. */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
    verbs: [create]
    resources: [{ group: "", resources: [pods] }]
  - level: None
`;

/** Microseconds since the epoch of an RFC 3339 timestamp with up to 9 fractional digits. */
function micros(ts: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(ts);
  if (!m) return NaN;
  return Date.parse(`${m[1]}Z`) * 1000 + Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
}

export interface AuditedCreate {
  namespace: string;
  code: number;
  /** The apiserver's own span of the request, ms. */
  ms: number;
}

/** Pod creates in the audit log (batch mode: call once its flush interval has passed). */
export function auditedCreates(path: string): AuditedCreate[] {
  const out: AuditedCreate[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as {
      stage?: string;
      verb?: string;
      objectRef?: { resource?: string; subresource?: string; namespace?: string };
      responseStatus?: { code?: number };
      requestReceivedTimestamp?: string;
      stageTimestamp?: string;
    };
    if (
      e.stage !== 'ResponseComplete' ||
      e.verb !== 'create' ||
      e.objectRef?.resource !== 'pods' ||
      e.objectRef.subresource
    )
      continue;
    out.push({
      namespace: e.objectRef.namespace ?? '',
      code: e.responseStatus?.code ?? 0,
      ms: (micros(e.stageTimestamp!) - micros(e.requestReceivedTimestamp!)) / 1000,
    });
  }
  return out;
}
