/**
 * Prometheus metrics, on a registry per app (tests build many apps; a global registry would collide).
 * Buckets reach down to 0.25 ms: admission work is sub-millisecond, and the apiserver's own timeout (10 s)
 * caps the top.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  latency: Histogram<'route'>;
  decisions: Counter<'route' | 'decision' | 'reason'>;
  podLookups: Counter<'source'>;
}

export function createMetrics(opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'meshgate_' });
  const latency = new Histogram({
    name: 'meshgate_admission_duration_seconds',
    help: 'Time to decide an AdmissionReview, from decoded body to encoded response',
    labelNames: ['route'],
    buckets: [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 10],
    registers: [registry],
  });
  const decisions = new Counter({
    name: 'meshgate_admission_decisions_total',
    help: 'Admission decisions by route, outcome and stable reason code',
    labelNames: ['route', 'decision', 'reason'],
    registers: [registry],
  });
  const podLookups = new Counter({
    name: 'meshgate_binding_pod_lookups_total',
    help: 'How the binding guard learnt a pod\'s redirect mode: cache hit, GET after a cache miss, or failed GET',
    labelNames: ['source'],
    registers: [registry],
  });
  return { registry, latency, decisions, podLookups };
}
