/**
 * `meshgate explain -f FILE [--node NAME] [--config FILE] [--node-state FILE]`: for each pod (template), in
 * words: inject or skip and why, the redirect mode and why, what would be rejected and why. Same core as the
 * webhook; `--node` evaluates the pods as if already bound to that node.
 */
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from './args.ts';
import { InputError, decideTemplate, loadOffline, readDocuments } from './offline.ts';
import { podTemplates } from '../manifests/workloads.ts';
import { reasonText } from '../inject/reasons.ts';
import type { Decision } from '../inject/decide.ts';
import { ConfigError } from '../config/load.ts';
import { NodeStateError } from '../facts/node-state.ts';

const USAGE = 'usage: meshgate explain -f FILE|- [--node NAME] [--config FILE] [--node-state FILE]\n';

export function describeDecision(d: Decision): string[] {
  if (d.kind === 'skip') return [`not injected (${d.reason}): ${reasonText(d.reason)}`];
  if (d.kind === 'deny') return [`REJECTED (${d.reason}): ${reasonText(d.reason)}`, `  ${d.message}`];
  const s = d.status;
  const lines = [
    `injected; redirect mode ${s.mode.toUpperCase()} (${d.reason}): ${reasonText(d.reason)}`,
  ];
  if (s.node) lines.push(`  target node: ${s.node}`);
  lines.push(`  proxy as ${s.nativeSidecar ? 'a native sidecar (init container, restartPolicy Always)' : 'a regular container'}`);
  if (s.initContainers.length) lines.push(`  adds init containers: ${s.initContainers.join(', ')}`);
  if (s.containers.length) lines.push(`  adds containers: ${s.containers.join(', ')}`);
  if (s.removedInitContainers?.length) lines.push(`  removes privileged init containers: ${s.removedInitContainers.join(', ')}`);
  if (s.affinity) lines.push('  requires node label meshgate.io/cni-verified=true (scheduled only onto verified nodes)');
  if (s.mode === 'init') lines.push('  note: the privileged init container needs NET_ADMIN/NET_RAW: Pod Security baseline/restricted refuse it');
  return lines;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  let flags;
  try {
    flags = parseFlags(argv, {
      filename: { type: 'string', short: 'f' },
      node: { type: 'string' },
      config: { type: 'string' },
      'node-state': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    }).values;
    if (flags.help) return io.stdout(USAGE), 0;
    if (!flags.filename) throw new UsageError('missing -f FILE (or -f - for standard input)');
  } catch (err) {
    io.stderr(`meshgate explain: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  try {
    const { cfg, facts } = loadOffline(flags.config, flags['node-state']);
    const source = flags.filename === '-' ? '<stdin>' : flags.filename;
    const out: string[] = [];
    for (const doc of readDocuments(source, await io.readInput(flags.filename))) {
      if (!doc.value) continue;
      const refs = podTemplates(doc.value);
      if (refs.length === 0) out.push(`document ${doc.index + 1}: ${String(doc.value.kind)} has no pod template: unchanged`);
      for (const ref of refs) {
        out.push(`document ${doc.index + 1}: ${ref.kind} ${ref.name}${ref.namespace ? ` (namespace ${ref.namespace})` : ''}:`);
        for (const line of describeDecision(decideTemplate(ref, facts, cfg, flags.node))) out.push(`  ${line}`);
      }
    }
    io.stdout(out.join('\n') + '\n');
    return 0;
  } catch (err) {
    if (err instanceof InputError || err instanceof ConfigError || err instanceof NodeStateError || (err as NodeJS.ErrnoException).code) {
      io.stderr(`meshgate explain: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}
