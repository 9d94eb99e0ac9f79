/**
 * The checks of `meshgate check` (run.ts), in the catalogue's order: code, section, what each verifies (one line,
 * for docs and --help) and the fix when it fails. report.ts joins them with the preflight's (preflight-checks.ts)
 * into the one catalogue, CHECKS, and types each section there.
 */
export const RUN_CHECKS = {
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
    verifies: 'the validating webhooks fail closed (failurePolicy Fail); audit and workload entries fail open',
    hint:
      'set failurePolicy: Fail on the validating webhooks of enforce and warn (the chart always does): with Ignore, ' +
      'an outage lets pods run unchecked; and Ignore on audit and workload entries, which must never refuse',
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
  enforcement_level: {
    section: 'workloads',
    verifies: 'every guarded namespace is at enforcement level enforce (meshgate.io/enforcement)',
    hint:
      'see what each would refuse: meshgate check --audit -n {ns}; fix it, then promote the namespace: ' +
      'kubectl label namespace NAMESPACE meshgate.io/enforcement=enforce --overwrite; once all are, set the ' +
      'chart value config.enforcement.default=enforce',
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
  pods_would_be_refused: {
    section: 'workloads',
    verifies: 'no pod runs that meshgate admitted below enforce or would refuse at enforce (the audit report)',
    hint:
      "fix each workload as its line says (the reason's advice), restart it, and check again; a namespace whose " +
      'pods all pass may be promoted: kubectl label namespace NAMESPACE meshgate.io/enforcement=enforce --overwrite',
  },
  pods_admitted: {
    section: 'workloads',
    verifies: "running opted-in pods went through meshgate's mutating webhook",
    hint:
      'these pods are meshed but meshgate never chose their redirect (no meshgate.io/status: created while its ' +
      'mutating webhook was skipped): restart them with the commands shown',
  },
  pods_held: {
    section: 'workloads',
    verifies: "no pod waits Pending on meshgate's verified-node affinity",
    hint:
      'these pods wait for a verified node (each line says which): see the nodes section above and ' +
      'kubectl get nodes -L meshgate.io/cni-verified; they start once a node they fit is verified',
  },
  repair_controller_ready: {
    section: 'workloads',
    verifies: 'the repair controller Deployment has a ready replica',
    hint:
      'kubectl -n {ns} describe deployment {repair}; without it, pods whose validation failed crash-loop ' +
      'instead of being recreated',
  },
} as const;
