/**
 * `meshgate explain -f FILE [--node NAME] [--config FILE] [--node-state FILE]`: for each pod (template), in
 * words: inject or skip and why, the redirect mode and why, what would be rejected and why. Same core as the
 * webhook; `--node` evaluates the pods as if already bound to that node.
 */
import type { CliIO } from './io.ts';
import { OFFLINE_USAGE, decideTemplate, runOffline } from './offline.ts';
import { reasonText } from '../contract/reasons.ts';
import type { Decision } from '../inject/decide.ts';

const USAGE = `usage: meshgate explain -f FILE|- (--config FILE | --mesh NAME) [--node NAME] [--node-state FILE]
                        [--progress]

Says in words what meshgate would do with each pod (template), and why.

${OFFLINE_USAGE}  --node NAME          judge the pods as if already bound to this node
example:
  meshgate explain --mesh istio --node-state nodes.yaml --node worker-1 -f deploy.yaml
`;

export function describeDecision(d: Decision): string[] {
  if (d.kind === 'skip') return [`not injected (${d.reason}): ${reasonText(d.reason)}`];
  if (d.kind === 'deny') return [`REJECTED (${d.reason}): ${reasonText(d.reason)}`, `  ${d.message}`];
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

export function run(argv: string[], io: CliIO): Promise<number> {
  return runOffline(
    'explain',
    USAGE,
    argv,
    io,
    { node: { type: 'string' } },
    (doc, refs, where, { cfg, facts, flags }) => {
      if (!doc.value) return '';
      if (refs.length === 0)
        return `document ${doc.index + 1}: ${String(doc.value.kind)} has no pod template: unchanged\n`;
      const out: string[] = [];
      for (const ref of refs) {
        out.push(
          `document ${doc.index + 1}: ${ref.kind} ${ref.name}${ref.namespace ? ` (namespace ${ref.namespace})` : ''}:`,
        );
        for (const line of describeDecision(
          decideTemplate(ref, where(ref), facts, cfg, flags.node as string | undefined),
        ))
          out.push(`  ${line}`);
      }
      return out.map((line) => `${line}\n`).join('');
    },
    // With no document at all, one empty line, as before.
    { separator: '', ifEmpty: '\n' },
  );
}
