/**
 * What `meshgate check` reports: one result per check, each under a stable code (the catalogue below, from
 * checks.ts and preflight-checks.ts, is the only place codes are defined, so the table, the JSON, the docs and the
 * tests agree), grouped in sections in the order an operator would fix things: before installing (`--pre`), the
 * webhook (nothing else matters while it is down), its certificate, the node agents and their verdicts, then the
 * workloads those guard.
 */
import { RUN_CHECKS } from './checks.ts';
import { PREFLIGHT_CHECKS } from './preflight-checks.ts';

export type Status = 'ok' | 'warn' | 'fail' | 'skip';

export type Section = 'preflight' | 'webhook' | 'certificates' | 'node agent' | 'nodes' | 'workloads';
export const SECTIONS: readonly Section[] = [
  'preflight',
  'webhook',
  'certificates',
  'node agent',
  'nodes',
  'workloads',
];

/**
 * Every check: its section, what it verifies (one line, for docs), and the fix when it fails. Hints name the
 * objects through placeholders ({ns}, {name}, {agent}, {secret}, {repair}) filled from `InstalledNames` when rendered.
 */
export const CHECKS = { ...PREFLIGHT_CHECKS, ...RUN_CHECKS } as const satisfies Record<
  string,
  { section: Section; verifies: string; hint: string }
>;

export type CheckCode = keyof typeof CHECKS;
export const CHECK_CODES = Object.keys(CHECKS) as CheckCode[];

/** One thing a check looked at (a node, a pod's owner, a webhook): listed under the check. */
export interface Item {
  name: string;
  status: Status;
  /** A stable code when there is one (a node's verdict reason, a pod's posture reason). */
  reason?: string;
  message: string;
  /** A command that fixes it (restart a workload). */
  command?: string;
  /**
   * Every change that makes it admissible at enforce (src/policy/checklist.ts), one line each, for all of a
   * workload's flagged pods together: what to change in one pass.
   */
  changes?: string[];
}

export interface CheckResult {
  code: CheckCode;
  status: Status;
  message: string;
  items?: Item[];
  /**
   * What the finding concerns beyond its items (kept.ts: at most ITEMS_KEPT of them): Nodes past the first ones
   * listed, pods of workloads past them; counted in the message, not listed.
   */
  omitted?: { count: number; of: 'nodes' | 'pods' };
}

/** The objects the chart installs, by name: the release's full name and what it derives from it. */
export interface InstalledNames {
  namespace: string;
  /** Both webhook configurations, the webhook's Deployment and the ConfigMap with the config (chart: fullname). */
  webhookConfig: string;
  nodeAgent: string;
  tlsSecret: string;
  repairController: string;
}

/** A check's hint with the object names filled in. */
export function hintFor(code: CheckCode, n: InstalledNames): string {
  const fill: Record<string, string> = {
    ns: n.namespace,
    name: n.webhookConfig,
    agent: n.nodeAgent,
    secret: n.tlsSecret,
    repair: n.repairController,
  };
  return CHECKS[code].hint.replace(/\{(ns|name|agent|secret|repair)\}/g, (_, k: string) => fill[k]);
}

export interface Report {
  /** What was checked: shown above the table and in the JSON. */
  context: {
    mesh: string;
    names: InstalledNames;
    configSource: string;
    server?: string;
    checkedAt: string;
    /** A part of the report only: `check --audit`, or the preflight of `check --pre`. */
    view?: 'audit' | 'preflight';
  };
  results: CheckResult[];
}

/**
 * `meshgate check --audit`: what audit and warn levels saw — each guarded namespace's level, and the pods admitted
 * below enforce or that enforce would refuse, by namespace, owner and reason, with what to fix.
 */
export const AUDIT_CODES: readonly CheckCode[] = ['namespaces_opted_in', 'enforcement_level', 'pods_would_be_refused'];

export function auditReport(report: Report): Report {
  return {
    context: { ...report.context, view: 'audit' },
    results: report.results.filter((r) => AUDIT_CODES.includes(r.code)),
  };
}

/** The documented exit codes: 0 no check failed (warnings allowed), 1 a check failed, 2 usage/config/connection. */
export const EXIT = { ok: 0, problems: 1, error: 2 } as const;

export function exitCode(report: Report): number {
  return report.results.some((r) => r.status === 'fail') ? EXIT.problems : EXIT.ok;
}

export function counts(report: Report): Record<Status, number> {
  const c: Record<Status, number> = { ok: 0, warn: 0, fail: 0, skip: 0 };
  for (const r of report.results) c[r.status]++;
  return c;
}

/** The worst of some statuses: fail > warn > ok; `skip` only when there is nothing else. */
export function worst(statuses: Iterable<Status>): Status {
  let out: Status = 'skip';
  const rank: Record<Status, number> = { skip: 0, ok: 1, warn: 2, fail: 3 };
  for (const s of statuses) if (rank[s] > rank[out]) out = s;
  return out;
}

export function result(
  code: CheckCode,
  status: Status,
  message: string,
  items?: Item[],
  omitted?: { count: number; of: 'nodes' | 'pods' },
): CheckResult {
  const r: CheckResult = items?.length ? { code, status, message, items } : { code, status, message };
  return omitted && omitted.count > 0 ? { ...r, omitted } : r;
}

/** A check that could not run because something it depends on is missing. */
export function skipped(code: CheckCode, why: string): CheckResult {
  return { code, status: 'skip', message: `not checked: ${why}` };
}
