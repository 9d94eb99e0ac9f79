/**
 * meshgate's audit findings as a wg-policy PolicyReport (wgpolicyk8s.io/v1alpha2, the format Kyverno writes and
 * policy UIs read), one per namespace, named `meshgate`: `kubectl get polr -A` lists the namespaces with pods
 * admitted below enforce that enforce would refuse, and the report says which workloads, why and the fix (issue 34
 * §4). Pure: the findings in, the object out.
 *
 * One result per workload, level and reason (the pods of one template share them), not per pod: a report stays as
 * small as the namespace's list of broken workloads, whatever their replicas. Bounded: at most MAX_RESULTS results
 * (the first by workload name), each message at most MAX_MESSAGE characters, so a report stays far below etcd's
 * 1.5 MiB per object (200 × ~1.5 KiB ≈ 300 KiB); the summary counts every result, and an annotation says how many
 * were left out.
 */
import type { ReasonCode } from '../../contract/reasons.ts';
import { adviceFor } from '../../policy/mutate/advice.ts';

export const REPORT_NAME = 'meshgate';
export const REPORT_API = 'wgpolicyk8s.io/v1alpha2';
/** Who made the report: what uninstall and the leader's clean-up select meshgate's reports by. */
export const REPORT_LABELS = { 'app.kubernetes.io/managed-by': 'meshgate' } as const;
export const LEFT_OUT_ANNOTATION = 'meshgate.io/results-left-out';
export const MAX_RESULTS = 200;
export const MAX_MESSAGE = 1024;

/** A workload as a result's resource names it (the pods' controller, a Deployment for a ReplicaSet's pods). */
export interface WorkloadRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** What the report says about one workload, level and reason: its pods admitted with that record now. */
export interface Finding {
  workload: WorkloadRef;
  level: 'warn' | 'audit';
  reason: ReasonCode;
  /** The recorded refusal's message (of one of its pods). */
  message: string;
  pods: number;
  /** One of its pods, for `kubectl describe`. */
  example: string;
  /** When meshgate first saw a pod of this finding (seconds since the epoch). */
  since: number;
}

const cut = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE - 3)}...` : s);

/** The PolicyReport of namespace `namespace`, for server-side apply. */
export function policyReport(namespace: string, findings: readonly Finding[]): Record<string, unknown> {
  const sorted = [...findings].sort(
    (a, b) =>
      a.workload.name.localeCompare(b.workload.name) ||
      a.workload.kind.localeCompare(b.workload.kind) ||
      a.reason.localeCompare(b.reason) ||
      a.level.localeCompare(b.level),
  );
  const kept = sorted.slice(0, MAX_RESULTS);
  const leftOut = sorted.length - kept.length;
  return {
    apiVersion: REPORT_API,
    kind: 'PolicyReport',
    metadata: {
      name: REPORT_NAME,
      namespace,
      labels: { ...REPORT_LABELS },
      ...(leftOut > 0 ? { annotations: { [LEFT_OUT_ANNOTATION]: String(leftOut) } } : {}),
    },
    summary: { pass: 0, fail: sorted.length, warn: 0, error: 0, skip: 0 },
    results: kept.map((f) => ({
      source: 'meshgate',
      policy: `meshgate-${f.level}`,
      rule: f.reason,
      category: 'Service mesh',
      severity: 'high',
      result: 'fail',
      scored: true,
      timestamp: { seconds: f.since, nanos: 0 },
      message: cut(
        `${f.pods} pod${f.pods === 1 ? '' : 's'} admitted only because namespace ${namespace} is at ${f.level}; ` +
          `at enforce they would be refused [${f.reason}]: ${f.message}. To fix: ${adviceFor(f.reason)}`,
      ),
      resources: [{ ...f.workload, namespace }],
      properties: { level: f.level, reason: f.reason, pods: String(f.pods), examplePod: f.example },
    })),
  };
}
