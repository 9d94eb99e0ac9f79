/**
 * The node agent's Prometheus metrics (docs/metrics.md), fed by the agent loop through its observer. A registry of
 * its own per agent (tests build several), written without prom-client (exposition.ts); process metrics keep
 * prom-client's unprefixed names, as the webhook's do.
 *
 * The series carry no node label: the scrape adds one (the chart's PodMonitor copies the pod's node name into
 * `node`), as Prometheus' conventions want for what identifies a target.
 */
import { isCniReasonCode, CNI_REASONS, type CniReasonCode } from '../cni/reasons.ts';
import type { ChainVerdict } from '../cni/types.ts';
import type { AgentObserver, AgentStep } from './agent.ts';
import { registerAgentBuildInfo, registerProcessMetrics, TextRegistry } from './exposition.ts';

export interface AgentMetrics {
  registry: TextRegistry;
  observer: AgentObserver;
}

/** Every reason code a verdict can carry, so a node's series exist (at 0) before its first change. */
const REASON_CODES = Object.keys(CNI_REASONS).filter(isCniReasonCode);

export function createAgentMetrics(opts: { processMetrics?: boolean } = {}): AgentMetrics {
  const registry = new TextRegistry();
  const verdictGauge = registry.gauge<{ reason: CniReasonCode }>(
    'meshgate_node_agent_verdict',
    'The verdict of the last check of this node\'s CNI chain: 1 for its reason code ("verified" when verified), ' +
      '0 for every other code',
    ['reason'],
  );
  const lastCheck = registry.gauge(
    'meshgate_node_agent_last_check_timestamp_seconds',
    'When the agent last read and judged the CNI configuration, seconds since the epoch',
  );
  const lastConfirmed = registry.gauge(
    'meshgate_node_agent_last_write_timestamp_seconds',
    'When the agent last wrote its verdict to the Node (a change or a heartbeat), seconds since the epoch; ' +
      'readers age the verdict from the heartbeat',
  );
  const publishes = registry.counter<{ verified: 'true' | 'false' }>(
    'meshgate_node_agent_publishes_total',
    'Verdict changes written to the Node (label, condition, annotation, taint), by whether the new verdict is ' +
      'verified',
    ['verified'],
  );
  const heartbeats = registry.counter(
    'meshgate_node_agent_heartbeats_total',
    "Unchanged verdicts re-stamped on the Node (the condition's lastHeartbeatTime), once per resync",
  );
  const publishErrors = registry.counter<{ operation: Exclude<AgentStep, 'read_files'> }>(
    'meshgate_node_agent_publish_errors_total',
    'Failed calls to the Kubernetes API, by operation (read_node, publish, heartbeat); the agent retries with ' +
      'backoff',
    ['operation'],
  );
  const checkErrors = registry.counter(
    'meshgate_node_agent_check_errors_total',
    'Checks that could not read the CNI configuration or plugin directories (the mounts, not the chain, failed)',
  );
  if (opts.processMetrics) registerProcessMetrics(registry);
  registerAgentBuildInfo(registry);
  for (const code of REASON_CODES) verdictGauge.set({ reason: code }, 0);
  for (const verified of ['true', 'false'] as const) publishes.inc({ verified }, 0);
  for (const operation of ['read_node', 'publish', 'heartbeat'] satisfies AgentStep[]) {
    publishErrors.inc({ operation }, 0);
  }
  const nowSeconds = () => Date.now() / 1000;

  const observer: AgentObserver = {
    checked(verdict: ChainVerdict) {
      for (const code of REASON_CODES) verdictGauge.set({ reason: code }, code === verdict.reason ? 1 : 0);
      verdictGauge.set({ reason: verdict.reason }, 1);
      lastCheck.set(nowSeconds());
    },
    published(verdict: ChainVerdict) {
      publishes.inc({ verified: verdict.verified ? 'true' : 'false' });
      lastConfirmed.set(nowSeconds());
    },
    heartbeat() {
      heartbeats.inc();
      lastConfirmed.set(nowSeconds());
    },
    failed(step: AgentStep, _err: Error) {
      if (step === 'read_files') checkErrors.inc();
      else publishErrors.inc({ operation: step });
    },
  };
  return { registry, observer };
}
