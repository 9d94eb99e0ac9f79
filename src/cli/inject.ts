/**
 * `meshgate inject -f FILE|- (--config FILE | --mesh NAME) [--node-state FILE] [--progress]`: like `istioctl kube-inject`. Every
 * pod template goes through the same core and the same JSON Patch ops as the webhook (with mesh istio or linkerd,
 * that adjusts what the mesh's injector injected); other documents pass through unchanged. Documents are read,
 * injected and written one at a time (offline.ts), so memory holds one document whatever the input's size; an
 * error (exit 1, naming file and document) in an input whose output stays under 4 Mi characters leaves stdout
 * empty, and a larger run's stderr says its stdout is incomplete (output.ts).
 * No admission mark (src/mark/): it needs the webhook's key; the webhook adds it when it admits the pod.
 */
import jsonpatch from 'fast-json-patch';
import { stringify } from 'yaml';
import type { CliIO } from './io.ts';
import { InputError } from './documents.ts';
import { OFFLINE_USAGE, decideTemplate, runOffline } from './offline.ts';
import type { PatchOp } from '../contract/patch.ts';

const USAGE = `usage: meshgate inject -f FILE|- (--config FILE | --mesh NAME) [--node-state FILE] [--progress]

Writes the manifests with every pod template as meshgate's webhook would admit it, without the admission mark
(meshgate.io/admitted): the CLI holds no key; the webhook marks each pod when it admits it.

${OFFLINE_USAGE}
example:
  meshgate inject --mesh istio --node-state nodes.yaml -f <(istioctl kube-inject -f deploy.yaml)
`;

/** Moves ops built for a pod onto the pod template inside a larger document. */
function reroot(ops: PatchOp[], pointer: string): PatchOp[] {
  return ops.map((op) => ({ ...op, path: pointer + op.path }));
}

export function injectCommand(argv: string[], io: CliIO): Promise<number> {
  return runOffline(
    'inject',
    USAGE,
    argv,
    io,
    (doc, refs, where, { cfg, facts }) => {
      if (!doc.value) return doc.text().replace(/\n*$/, '\n');
      let ops: PatchOp[] = [];
      for (const ref of refs) {
        const d = decideTemplate({ ref, where: where(ref), facts, cfg });
        if (d.kind === 'deny') throw new InputError(`${where(ref)}: denied: ${d.message} [${d.reason}]`);
        if (d.kind === 'patch') ops = ops.concat(reroot(d.ops, ref.pointer));
      }
      if (ops.length === 0) return doc.text().replace(/\n*$/, '\n');
      // Op values are meshgate's shared, frozen objects: the document gets copies, as the apiserver's would. The
      // document itself is this run's own (read for this call, used by nothing after it): patched in place.
      const patched = jsonpatch.applyPatch(
        doc.value,
        structuredClone(ops) as jsonpatch.Operation[],
        true,
        true,
      ).newDocument;
      // Shared objects (one injected container in several templates) are written out, never as YAML anchors.
      return stringify(patched, { lineWidth: 0, aliasDuplicateObjects: false });
    },
    { separator: '---\n', ifEmpty: '' },
  );
}
