/** A decision of the core in words, for `meshgate explain` offline and live. */
import { reasonText } from '../contract/reasons.ts';
import type { Decision } from '../policy/mutate/decide.ts';

/**
 * `changes`: under a refusal, every change that makes the pod admissible (src/policy/checklist.ts), so one pass over
 * the workload's spec suffices.
 */
export function describeDecision(d: Decision, changes: readonly string[] = []): string[] {
  if (d.kind === 'skip') return [`not injected (${d.reason}): ${reasonText(d.reason)}`];
  if (d.kind === 'deny')
    return [
      `REJECTED (${d.reason}): ${reasonText(d.reason)}`,
      `  ${d.message}`,
      ...(changes.length ? ['  to be admitted, change:', ...changes.map((c) => `    - ${c}`)] : []),
    ];
  const s = d.status;
  const lines = [`injected; redirect mode ${s.mode.toUpperCase()} (${d.reason}): ${reasonText(d.reason)}`];
  if (s.node) lines.push(`  target node: ${s.node}`);
  lines.push(
    `  proxy as ${s.nativeSidecar ? 'a native sidecar (init container, restartPolicy Always)' : 'a regular container'}`,
  );
  if (s.initContainers.length) lines.push(`  adds init containers: ${s.initContainers.join(', ')}`);
  if (s.containers.length) lines.push(`  adds containers: ${s.containers.join(', ')}`);
  if (s.removedInitContainers?.length)
    lines.push(`  removes privileged init containers: ${s.removedInitContainers.join(', ')}`);
  if (s.affinity)
    lines.push('  requires node label meshgate.io/cni-verified=true (scheduled only onto verified nodes)');
  if (s.mode === 'init')
    lines.push(
      '  note: the privileged init container needs NET_ADMIN/NET_RAW: Pod Security baseline/restricted refuse it',
    );
  return lines;
}
