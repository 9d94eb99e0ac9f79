/**
 * `meshgate inject -f FILE|- [--config FILE] [--node-state FILE]`: like `istioctl kube-inject`. Every pod
 * template that is not opted out or a built-in skip is injected through the same core and the same JSON Patch
 * ops as the webhook; other documents pass through unchanged. All output is built before any is written, so an
 * error (exit 1, naming file and document) never leaves half a manifest on stdout.
 */
import jsonpatch from 'fast-json-patch';
import { stringify } from 'yaml';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from './args.ts';
import { InputError, decideTemplate, loadOffline, readDocuments } from './offline.ts';
import { podTemplates } from '../manifests/workloads.ts';
import type { PatchOp } from '../inject/patch.ts';
import { ConfigError } from '../config/load.ts';
import { NodeStateError } from '../facts/node-state.ts';

const USAGE = 'usage: meshgate inject -f FILE|- [--config FILE] [--node-state FILE]\n';

/** Moves ops built for a pod onto the pod template inside a larger document. */
function reroot(ops: PatchOp[], pointer: string): PatchOp[] {
  return ops.map((op) => ({ ...op, path: pointer + op.path }));
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  let flags;
  try {
    flags = parseFlags(argv, {
      filename: { type: 'string', short: 'f' },
      config: { type: 'string' },
      'node-state': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    }).values;
    if (flags.help) return io.stdout(USAGE), 0;
    if (!flags.filename) throw new UsageError('missing -f FILE (or -f - for standard input)');
  } catch (err) {
    io.stderr(`meshgate inject: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  try {
    const { cfg, facts } = loadOffline(flags.config, flags['node-state']);
    const source = flags.filename === '-' ? '<stdin>' : flags.filename;
    const docs = readDocuments(source, await io.readInput(flags.filename));
    const out: string[] = [];
    for (const doc of docs) {
      if (!doc.value) continue;
      let ops: PatchOp[] = [];
      for (const ref of podTemplates(doc.value)) {
        const d = decideTemplate(ref, facts, cfg);
        if (d.kind === 'deny') throw new InputError(`${source}: document ${doc.index + 1} (${ref.kind} ${ref.name}): denied: ${d.message}`);
        if (d.kind === 'patch') ops = ops.concat(reroot(d.ops, ref.pointer));
      }
      if (ops.length === 0) {
        out.push(doc.text.replace(/\n*$/, '\n'));
        continue;
      }
      // Op values are meshgate's shared, frozen objects: the document gets copies, as the apiserver's would.
      const patched = jsonpatch.applyPatch(structuredClone(doc.value), structuredClone(ops) as jsonpatch.Operation[], true, false).newDocument;
      // Shared objects (one injected container in several templates) are written out, never as YAML anchors.
      out.push(stringify(patched, { lineWidth: 0, aliasDuplicateObjects: false }));
    }
    io.stdout(out.join('---\n'));
    return 0;
  } catch (err) {
    if (err instanceof InputError || err instanceof ConfigError || err instanceof NodeStateError || (err as NodeJS.ErrnoException).code) {
      io.stderr(`meshgate inject: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}
