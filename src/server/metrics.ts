/**
 * The webhook's Prometheus metrics, on a registry per app (tests build many apps; a global registry would collide).
 * Names and labels are documented in docs/metrics.md and never renamed: alerts and dashboards depend on them.
 *
 * Conventions, as Kubernetes components follow them: process and runtime metrics keep prom-client's standard,
 * unprefixed names (process_cpu_seconds_total, nodejs_heap_size_used_bytes: like Go's process_* and go_*), so the
 * usual dashboards find them; meshgate's own carry the meshgate_ prefix. Requests are counted by route and HTTP code
 * and in flight by route, like controller-runtime's controller_runtime_webhook_requests_total{code,webhook} and
 * controller_runtime_webhook_requests_in_flight{webhook}; the route label is the path without its slash
 * ("mutate", "validate"), as in meshgate_admission_decisions_total.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CertPair } from '../tls/source.ts';
import { certificateExpiry } from '../tls/expiry.ts';
import type { NodeFact } from '../facts/node-facts.ts';
import { registerBuildInfo } from '../util/build-info.ts';
import type { VerdictReason } from '../contract/reasons.ts';
import type { Labelled } from '../util/labelled.ts';
import type { AdmissionLogFields } from './admission-log.ts';

export interface Metrics {
  registry: Registry;
  /** From the decoded body to the encoded, serialized answer handed to the socket. */
  latency: Histogram<'route'>;
  /**
   * Label values typed, so the series stay bounded by the types: decision and reason from closed unions, route from
   * the routes registered at startup, namespace on refusals only and capped (refusalNamespace).
   */
  decisions: Labelled<{
    route: string;
    decision: AdmissionLogFields['decision'] | 'bad_request';
    reason: VerdictReason;
    namespace?: string;
  }>;
  refusalNamespace: (decision: string, namespace: string | undefined) => string | undefined;
  /**
   * Pods, not calls (issue 34 §4): one per pod CREATE admitted below enforce that enforce would refuse, counted by the
   * validating webhook (src/admission/level.ts podRecord), by level and the pod's one reason.
   */
  auditedPods: Labelled<{ level: 'warn' | 'audit'; reason: VerdictReason }>;
  podLookups: Counter<'source'>;
  /** Every answered request on an admission route, including refusals (413, 415, 429) and bad reviews (400). */
  requests: Counter<'route' | 'code'>;
  inFlight: Gauge<'route'>;
}

/**
 * Buckets from 0.25 ms: admission work is sub-millisecond (a typical review costs ~0.1 ms of CPU); the apiserver's
 * default webhook timeout (10 s) caps the top, and 30 s (its maximum) catches the rest.
 */
const LATENCY_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30];

/**
 * How many namespaces get refusal series of their own: 100. The namespace label is on refusals only (decision deny
 * or error; allow and patch series have none): allowed pods are most reviews and every opted-in namespace has
 * them, while refusals come from few namespaces, and which ones is what an operator asks. A counter keeps its
 * series for the process's life, and namespaces come and go (CI creates one per run): past the first 100
 * namespaces that saw a refusal, the rest count as namespace="_other" (no Kubernetes namespace has an underscore;
 * the admission log line names the real one). At most 100 × the refusal reasons a namespace hits (a few) × the
 * routes series. Scraped by the chart's ServiceMonitor (honorLabels false), the label arrives as
 * `exported_namespace`: the target's own `namespace` (meshgate's) wins, as for cert-manager's per-namespace series.
 */
export const MAX_REFUSAL_NAMESPACES = 100;
const OTHER_NAMESPACES = '_other';

/** The namespace label of a decision, as MAX_REFUSAL_NAMESPACES says. */
export function refusalNamespaces(max = MAX_REFUSAL_NAMESPACES): Metrics['refusalNamespace'] {
  const seen = new Set<string>();
  return (decision, namespace) => {
    if (!['deny', 'error', 'audit', 'warn'].includes(decision) || !namespace) return undefined;
    if (seen.has(namespace)) return namespace;
    if (seen.size >= max) return OTHER_NAMESPACES;
    seen.add(namespace);
    return namespace;
  };
}

export function createMetrics(opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry });
  registerBuildInfo(registry);
  const registers = [registry];
  return {
    registry,
    latency: new Histogram({
      name: 'meshgate_admission_duration_seconds',
      help: 'Time to decode an AdmissionReview, decide, and encode and serialize the answer, by route',
      labelNames: ['route'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    decisions: new Counter({
      name: 'meshgate_admission_decisions_total',
      help:
        'Admission decisions by route, outcome and stable reason code; refusals (deny, error) also by namespace ' +
        `(the first ${MAX_REFUSAL_NAMESPACES} namespaces with a refusal, then "${OTHER_NAMESPACES}")`,
      labelNames: ['route', 'decision', 'reason', 'namespace'],
      registers,
    }),
    refusalNamespace: refusalNamespaces(),
    auditedPods: new Counter({
      name: 'meshgate_audited_pods_total',
      help:
        'Pods admitted at enforcement level warn or audit that enforce would refuse: one per pod created (dry runs ' +
        "not), counted by the validating webhook, by level and the pod's one reason code",
      labelNames: ['level', 'reason'],
      registers,
    }),
    podLookups: new Counter({
      name: 'meshgate_binding_pod_lookups_total',
      help: "How the binding guard learnt a pod's redirect mode: cache hit, GET after a cache miss, or failed GET",
      labelNames: ['source'],
      registers,
    }),
    requests: new Counter({
      name: 'meshgate_webhook_requests_total',
      help: 'Requests answered on an admission route, by route and HTTP status code (refusals included)',
      labelNames: ['route', 'code'],
      registers,
    }),
    inFlight: new Gauge({
      name: 'meshgate_webhook_requests_in_flight',
      help: 'Admission requests whose body is in and whose answer is not yet written, by route',
      labelNames: ['route'],
      registers,
    }),
  };
}

/**
 * Certificate expiry as cert-manager exports it (`…_expiration_timestamp_seconds`, so alerts compare it with
 * `time()`): the serving certificate and the CA that issued it, read from the source at every scrape. Also the
 * number of CAs in the published bundle: 2 during a CA rotation's overlap, so a rotation stuck there shows.
 */
export function registerCertificateMetrics(registry: Registry, certs: { current(): CertPair }): void {
  new Gauge({
    name: 'meshgate_certificate_expiration_timestamp_seconds',
    help:
      'When the serving certificate (certificate="serving") and the CA that issued it (certificate="ca") expire, ' +
      'seconds since the epoch',
    labelNames: ['certificate'],
    registers: [registry],
    collect() {
      const e = certificateExpiry(certs.current());
      this.set({ certificate: 'serving' }, e.serving.getTime() / 1000);
      if (e.ca) this.set({ certificate: 'ca' }, e.ca.getTime() / 1000);
    },
  });
  new Gauge({
    name: 'meshgate_ca_bundle_certificates',
    help:
      'CA certificates in the bundle clients must trust (caBundle): ' +
      '2 while a CA rotation overlaps the old and the new CA',
    registers: [registry],
    collect() {
      this.set(certificateExpiry(certs.current()).bundleSize);
    },
  });
}

/**
 * The nodes as the webhook judges them right now (what admission decides by), counted by verdict and reason code at
 * each scrape: `verified="false"` with reason `stale_verdict` is a node whose agent stopped re-confirming, and
 * `not_published` one whose agent never ran. Every replica reports the same cluster-wide counts, so queries take
 * `max` over replicas, not `sum`. A scrape walks the cache once (5,000 nodes: well under a millisecond).
 */
export function registerNodeMetrics(
  registry: Registry,
  nodes: { facts(): Iterable<NodeFact>; synced(): boolean },
): void {
  new Gauge({
    name: 'meshgate_nodes',
    help: 'Nodes by the webhook\'s verdict (verified "true"/"false") and reason code, as admission sees them now',
    labelNames: ['verified', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      // Before the first full list the counts would claim an empty cluster: export nothing rather than zeros.
      if (!nodes.synced()) return;
      // The agent's own reason for a verified node may be any code; "verified" keeps the series count bounded.
      // Counted in a plain map first: prom-client hashes the labels of every inc(), which at 15,000 Nodes held the
      // event loop for tens of ms per scrape (issue 32); one set() per reason instead.
      const unverified = new Map<string, number>();
      let verified = 0;
      for (const f of nodes.facts()) {
        if (f.verified) verified++;
        else unverified.set(f.reason, (unverified.get(f.reason) ?? 0) + 1);
      }
      this.set({ verified: 'true', reason: 'verified' }, verified);
      for (const [reason, n] of unverified) this.set({ verified: 'false', reason }, n);
    },
  });
  new Gauge({
    name: 'meshgate_node_cache_synced',
    help: "1 once the webhook's node cache holds a full list of the cluster's Nodes (readiness waits for it)",
    registers: [registry],
    collect() {
      this.set(nodes.synced() ? 1 : 0);
    },
  });
}

/**
 * The guard's settings that loosen it, so a dashboard shows them beside the decisions: namespaces where
 * `apps.privileges` is relaxed to baseline (apps.baselineNamespaces, docs/security.md "Who can become the proxy"),
 * one series each (a short list the cluster admin writes), and whether baseline applies everywhere.
 */
export function registerConfigMetrics(
  registry: Registry,
  apps: { readonly privileges: string; readonly baselineNamespaces: readonly string[] },
): void {
  const g = new Gauge({
    name: 'meshgate_baseline_namespaces',
    help:
      'Namespaces where apps.privileges is relaxed to baseline (containers that could become the proxy are admitted ' +
      'with a warning): 1 per namespace listed in apps.baselineNamespaces, namespace="*" when baseline applies everywhere',
    labelNames: ['namespace'],
    registers: [registry],
  });
  if (apps.privileges === 'baseline') g.set({ namespace: '*' }, 1);
  else for (const ns of apps.baselineNamespaces) g.set({ namespace: ns }, 1);
}
