/**
 * What `meshgate check` reports: one result per check, each under a stable code (the catalogue below is the only
 * place codes are defined, so the table, the JSON, the docs and the tests agree), grouped in sections in the
 * order an operator would fix things: the webhook first (nothing else matters while it is down), its certificate,
 * the node agents and their verdicts, then the workloads those guard.
 */

export type Status = 'ok' | 'warn' | 'fail' | 'skip';

export type Section = 'webhook' | 'certificates' | 'node agent' | 'nodes' | 'workloads';
export const SECTIONS: readonly Section[] = ['webhook', 'certificates', 'node agent', 'nodes', 'workloads'];

/**
 * Every check: its section, what it verifies (one line, for docs), and the fix when it fails. Hints name the
 * objects through placeholders ({ns}, {name}, {agent}, {secret}, {repair}) filled from `Names` when rendered.
 */
export const CHECKS = {
  mutating_webhook_present: {
    section: 'webhook',
    verifies: 'the MutatingWebhookConfiguration exists and has webhooks',
    hint:
      'install or upgrade the chart (helm upgrade --install meshgate charts/meshgate -n {ns} --set mesh=MESH), ' +
      'or name yours with --webhook-config',
  },
  validating_webhook_present: {
    section: 'webhook',
    verifies: 'the ValidatingWebhookConfiguration exists and has webhooks',
    hint: 'install or upgrade the chart; without the validating webhook nothing refuses unmeshed pods',
  },
  webhook_failure_policy: {
    section: 'webhook',
    verifies: 'the validating webhooks fail closed (failurePolicy Fail)',
    hint:
      'set failurePolicy: Fail on the validating webhooks (the chart always does): ' +
      'with Ignore, an outage lets pods run unchecked',
  },
  webhook_endpoints_ready: {
    section: 'webhook',
    verifies: 'each webhook calls a Service with ready endpoints, or a URL that answers',
    hint:
      'look at the webhook pods: kubectl -n {ns} get pods -l app.kubernetes.io/component=webhook; ' +
      'kubectl -n {ns} describe deployment {name}',
  },
  webhook_ca_bundle: {
    section: 'certificates',
    verifies: 'each webhook carries a caBundle of PEM certificates, the same in all',
    hint:
      'self-managed certificates: a running webhook replica patches the caBundle (check its logs); ' +
      'cert-manager: check the CA injector and the cert-manager.io/inject-ca-from annotation',
  },
  serving_cert_trusted: {
    section: 'certificates',
    verifies: 'the serving certificate chains to the caBundle and names the host called',
    hint:
      'restart the webhook pods so they re-read the Secret and re-patch the caBundle ' +
      '(kubectl -n {ns} rollout restart deployment/{name}); with cert-manager, check the Certificate and the ' +
      'CA injector',
  },
  serving_cert_expiry: {
    section: 'certificates',
    verifies: 'the serving certificate and its CA are valid for 30 more days',
    hint:
      'self-managed: kubectl -n {ns} delete secret {secret}, then kubectl -n {ns} rollout restart deployment/{name} ' +
      'to issue a new pair; cert-manager: kubectl -n {ns} describe certificate',
  },
  node_agent_ready: {
    section: 'node agent',
    verifies: 'the node agent DaemonSet exists, all its pods ready and up to date',
    hint:
      'kubectl -n {ns} describe daemonset {agent}; ' +
      'kubectl -n {ns} get pods -l app.kubernetes.io/component=node-agent -o wide',
  },
  node_agent_on_every_node: {
    section: 'node agent',
    verifies: 'every Node runs a ready node agent pod (else it is never verified)',
    hint:
      'the DaemonSet does not cover these nodes (nodeSelector, or its pod is failing there): ' +
      'kubectl -n {ns} get pods -o wide --field-selector spec.nodeName=NODE',
  },
  node_verdict_fresh: {
    section: 'nodes',
    verifies: 'every verdict was re-confirmed within cni.maxVerdictAgeSeconds',
    hint:
      'the node agent on these nodes stopped heartbeating: check its pod and logs; ' +
      'the webhook already treats their verdicts as unverified',
  },
  node_verified: {
    section: 'nodes',
    verifies: 'every Node is verified for the configured mesh CNI plugin',
    hint:
      'on the node, meshgate check-node --plugin-type PLUGIN shows which CNI file the runtime loads and what to do; ' +
      'CNI-mode pods are refused on these nodes or pinned away from them',
  },
  mesh_plugin_consistent: {
    section: 'nodes',
    verifies: "the agents checked for the configured plugin; no chain runs another mesh's",
    hint:
      'the node agent and the webhook disagree on the mesh: give both the same config (the chart does), ' +
      'or fix --mesh / --config',
  },
  namespaces_opted_in: {
    section: 'workloads',
    verifies: "the webhooks' selectors select at least one namespace",
    hint: 'opt a namespace in: kubectl label namespace NAMESPACE meshgate.io/inject=enabled',
  },
  webhook_selectors_agree: {
    section: 'workloads',
    verifies: 'the mutating and the validating webhooks select the same namespaces',
    hint:
      'render both configurations from the same selectors (the chart does): a namespace seen by only one of them ' +
      'is injected but not enforced, or enforced but never injected',
  },
  app_privileges: {
    section: 'workloads',
    verifies:
      "no guarded namespace relaxes apps.privileges: every container but the mesh's must be unable to become the proxy",
    hint:
      'make the listed namespaces comply (runAsUser/runAsGroup, allowPrivilegeEscalation: false, drop ALL) and remove ' +
      'them from apps.baselineNamespaces (docs/security.md, "Who can become the proxy")',
  },
  pods_redirected: {
    section: 'workloads',
    verifies: 'running opted-in pods have the proxy and a redirect meshgate accepts',
    hint:
      'meshgate would refuse these pods today: created while its webhook was down (failurePolicy Ignore) or before ' +
      'their namespace was opted in, or in CNI mode on a node no longer verified; restart them with the commands ' +
      'shown once the webhook is healthy',
  },
  pods_admitted: {
    section: 'workloads',
    verifies: "running opted-in pods went through meshgate's mutating webhook",
    hint:
      'these pods are meshed but meshgate never chose their redirect (no meshgate.io/status: created while its ' +
      'mutating webhook was skipped): restart them with the commands shown',
  },
  repair_controller_ready: {
    section: 'workloads',
    verifies: 'the repair controller Deployment has a ready replica',
    hint:
      'kubectl -n {ns} describe deployment {repair}; without it, pods whose validation failed crash-loop ' +
      'instead of being recreated',
  },
} as const satisfies Record<string, { section: Section; verifies: string; hint: string }>;

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
}

export interface CheckResult {
  code: CheckCode;
  status: Status;
  message: string;
  items?: Item[];
}

/** The objects the chart installs, by name: the release's full name and what it derives from it. */
export interface Names {
  namespace: string;
  /** Both webhook configurations, the webhook's Deployment and the ConfigMap with the config (chart: fullname). */
  webhookConfig: string;
  nodeAgent: string;
  tlsSecret: string;
  repairController: string;
}

/** A check's hint with the object names filled in. */
export function hintFor(code: CheckCode, n: Names): string {
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
  context: { mesh: string; names: Names; configSource: string; server?: string; checkedAt: string };
  results: CheckResult[];
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

export function result(code: CheckCode, status: Status, message: string, items?: Item[]): CheckResult {
  return items?.length ? { code, status, message, items } : { code, status, message };
}

/** A check that could not run because something it depends on is missing. */
export function skipped(code: CheckCode, why: string): CheckResult {
  return { code, status: 'skip', message: `not checked: ${why}` };
}
