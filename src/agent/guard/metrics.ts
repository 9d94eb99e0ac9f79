/**
 * The proxy-identity guard's metrics (docs/metrics.md), on the node agent's own registry. Every series exists at 0
 * from the start, so an alert on an increase fires on the first stop.
 */
import type { TextRegistry } from '../exposition.ts';
import type { GuardAction, GuardObserver } from './guard.ts';

const ACTIONS: readonly GuardAction[] = ['killed', 'deleted', 'refused_by_runtime'];
const STEPS = ['delete', 'event', 'kill'] as const;

export function guardMetrics(registry: TextRegistry): GuardObserver {
  const acted = registry.counter<{ action: GuardAction }>(
    'meshgate_node_agent_proxy_identity_total',
    "Containers of guarded pods that were, or became, the proxy's UID or GID on this node, by what the guard did: " +
      'killed (its processes, once per pod), deleted (its pod), refused_by_runtime (the NRI plugin refused to ' +
      'create it; the guard records it)',
    ['action'],
  );
  const errors = registry.counter<{ step: (typeof STEPS)[number] }>(
    'meshgate_node_agent_proxy_guard_errors_total',
    'Guard actions that failed, by step (kill, delete, event); a failed deletion is retried every pass',
    ['step'],
  );
  const pass = registry.gauge(
    'meshgate_node_agent_proxy_guard_pass_seconds',
    "How long the guard's last pass over the node's processes took (part of the window it leaves)",
  );
  const threads = registry.gauge(
    'meshgate_node_agent_proxy_guard_threads',
    "Threads of guarded pods' containers whose identity the last pass read",
  );
  for (const action of ACTIONS) acted.inc({ action }, 0);
  for (const step of STEPS) errors.inc({ step }, 0);
  return {
    passed(ms, scan) {
      pass.set(ms / 1000);
      threads.set(scan?.threadsRead ?? 0);
    },
    acted(action) {
      acted.inc({ action });
    },
    failed(step) {
      errors.inc({ step });
    },
  };
}
