/**
 * The repair controller's Prometheus metrics, on a registry of its own (tests build several). Process metrics keep
 * prom-client's standard, unprefixed names (process_cpu_seconds_total, nodejs_heap_…), as Prometheus' conventions
 * and kube components do; meshgate's own carry the meshgate_repair_ prefix.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { registerBuildInfo } from '../util/build-info.ts';
import type { Labelled } from '../util/labelled.ts';
import type { ReasonCode } from '../contract/reasons.ts';
import type { HoldReason } from '../node/quarantine.ts';
import type { FailureReason, UntrustedWhy } from './failed/decide.ts';
import type { ReportWhy } from './unmeshed/judge.ts';
import type { ReportWrite } from './reports/reports.ts';

/** The API calls whose failures are counted (meshgate_repair_errors_total{action}), by every controller. */
export type RepairCall = 'delete' | 'event' | 'read_node' | 'withdraw' | 'release' | 'probe' | 'evict' | 'sweep';

export interface RepairMetrics {
  registry: Registry;
  deleted: Labelled<{ reason: FailureReason }>;
  reported: Labelled<{ reason: FailureReason }>;
  throttled: Counter;
  errors: Labelled<{ action: RepairCall }>;
  /** 1 while this replica holds the Lease and acts. */
  leader: Gauge;
  leaderTransitions: Counter;
  /** Pods known to have a failed validation container and not yet gone. */
  candidates: Gauge;
  /** Failed validation containers on pods whose admission mark does not verify: not acted on, not counted. */
  untrusted: Labelled<{ why: UntrustedWhy }>;
  // Node quarantine (src/repair/quarantine/quarantine.ts)
  nodeWithdrawals: Labelled<{ hold: HoldReason }>;
  nodesWithdrawn: Gauge;
  nodeRestorations: Counter;
  nodeProbes: Labelled<{ result: 'started' | 'cancelled' | 'passed' | 'failed' | 'inconclusive' }>;
  // Unmeshed pods in opted-in namespaces (src/repair/unmeshed/sweep.ts)
  unmeshedPods: Gauge;
  evicted: Labelled<{ reason: ReasonCode }>;
  unmeshedReported: Labelled<{ why: ReportWhy }>;
  evictionsThrottled: Counter;
  evictionsBlocked: Counter;
  // Audit findings as PolicyReports (src/repair/reports/reports.ts)
  policyReportWrites: Labelled<{ result: ReportWrite }>;
}

export function createRepairMetrics(opts: { processMetrics?: boolean } = {}): RepairMetrics {
  const registry = new Registry();
  if (opts.processMetrics) collectDefaultMetrics({ register: registry });
  registerBuildInfo(registry);
  const registers = [registry];
  return {
    registry,
    deleted: new Counter({
      name: 'meshgate_repair_pods_deleted_total',
      help: 'Pods deleted because their validation container failed, by validator reason',
      labelNames: ['reason'],
      registers,
    }),
    reported: new Counter({
      name: 'meshgate_repair_pods_reported_total',
      help: 'Pods with a failed validation container left alone (no controller to recreate them), by validator reason',
      labelNames: ['reason'],
      registers,
    }),
    throttled: new Counter({
      name: 'meshgate_repair_deletions_throttled_total',
      help: 'Deletions postponed by --max-deletes-per-minute',
      registers,
    }),
    errors: new Counter({
      name: 'meshgate_repair_errors_total',
      help: 'Failed API calls, by action (delete, event, read_node, withdraw, release, probe, evict, sweep)',
      labelNames: ['action'],
      registers,
    }),
    leader: new Gauge({
      name: 'meshgate_repair_leader',
      help: '1 while this replica holds the leader Lease and acts, else 0',
      registers,
    }),
    leaderTransitions: new Counter({
      name: 'meshgate_repair_leader_transitions_total',
      help: 'Times this replica became leader',
      registers,
    }),
    candidates: new Gauge({
      name: 'meshgate_repair_candidates',
      help: 'Pods with a failed validation container that still exist',
      registers,
    }),
    untrusted: new Counter({
      name: 'meshgate_repair_untrusted_failures_total',
      help:
        'Pods with a failed validation container left alone and not counted against their node, because their ' +
        'admission mark (meshgate.io/admitted) does not verify, by why (mark_missing, mark_invalid, no_key)',
      labelNames: ['why'],
      registers,
    }),
    nodeWithdrawals: new Counter({
      name: 'meshgate_repair_node_withdrawals_total',
      help:
        'Node verifications withdrawn after validation failures clustered on the node, ' +
        'by what holds the node (hold_off, flap_limit)',
      labelNames: ['hold'],
      registers,
    }),
    nodesWithdrawn: new Gauge({
      name: 'meshgate_repair_nodes_withdrawn',
      help: 'Nodes whose verification is withdrawn now (quarantine mark on the Node)',
      registers,
    }),
    nodeRestorations: new Counter({
      name: 'meshgate_repair_node_restorations_total',
      help: 'Withdrawn nodes given back to their node agent after a probe pod passed validation',
      registers,
    }),
    nodeProbes: new Counter({
      name: 'meshgate_repair_node_probes_total',
      help: 'Probe pods on withdrawn nodes, by result (started, passed, failed, inconclusive, cancelled)',
      labelNames: ['result'],
      registers,
    }),
    unmeshedPods: new Gauge({
      name: 'meshgate_repair_unmeshed_pods',
      help: "Pods of opted-in namespaces running without meshgate's redirect, at the last sweep",
      registers,
    }),
    evicted: new Counter({
      name: 'meshgate_repair_pods_evicted_total',
      help: 'Unmeshed pods evicted so their controllers recreate them through the webhook, by reason',
      labelNames: ['reason'],
      registers,
    }),
    unmeshedReported: new Counter({
      name: 'meshgate_repair_unmeshed_pods_reported_total',
      help: 'Unmeshed pods reported with an Event and left alone, by why (bare_pod, would_be_refused, not_evicting)',
      labelNames: ['why'],
      registers,
    }),
    evictionsThrottled: new Counter({
      name: 'meshgate_repair_evictions_throttled_total',
      help: 'Evictions postponed by --max-evictions-per-minute',
      registers,
    }),
    evictionsBlocked: new Counter({
      name: 'meshgate_repair_evictions_blocked_total',
      help: 'Evictions refused by a PodDisruptionBudget (retried)',
      registers,
    }),
    policyReportWrites: new Counter({
      name: 'meshgate_repair_policy_report_writes_total',
      help:
        "Writes of a namespace's PolicyReport of audit findings: applied, deleted (its last finding gone), failed " +
        '(retried), no_crd (the apiserver serves no wgpolicyk8s.io PolicyReports; retried every 5 minutes)',
      labelNames: ['result'],
      registers,
    }),
  };
}
