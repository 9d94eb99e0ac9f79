/**
 * `sidecar.istio.io/status`: istiod's record of what it injected, which istio-cni reads to decide whether a pod is
 * its to redirect. When meshgate replaces istio-init by its validator (CNI mode) the record must name the validator
 * instead (src/policy/mutate/companion.ts), so the annotation is parsed, the name replaced, and written back.
 */
import { escapePointer, type PatchOp } from '../contract/patch.ts';
import { deepFreeze } from '../util/json.ts';

export const ISTIO_STATUS = 'sidecar.istio.io/status';

/**
 * Answers by (from, to, annotation). istiod writes the same annotation into every pod of a revision (the names of
 * what it injected), so the same parse and serialisation was made on every companion review (issue 35). Only values
 * of up to MEMO_VALUE characters are kept (istiod's are a few hundred), MEMO_ENTRIES of them, the oldest out first:
 * at most 64 KiB. Answers are frozen: every review that gets one shares it.
 */
const MEMO_ENTRIES = 64;
const MEMO_VALUE = 1024;
const memo = new Map<string, readonly PatchOp[]>();

function ops(raw: string, from: string, to: string): readonly PatchOp[] {
  let status: { initContainers?: unknown };
  try {
    status = JSON.parse(raw) as { initContainers?: unknown };
  } catch {
    return [];
  }
  if (!Array.isArray(status?.initContainers) || !status.initContainers.includes(from)) return [];
  status.initContainers = status.initContainers.map((n) => (n === from ? to : n));
  return [
    {
      op: 'add',
      path: `/metadata/annotations/${escapePointer(ISTIO_STATUS)}`,
      value: JSON.stringify(status),
    } satisfies PatchOp,
  ];
}

/** The op rewriting the record with `to` in place of the init container `from`; none when it does not name it. */
export function istioStatusOps(raw: string | undefined, from: string, to: string): readonly PatchOp[] {
  if (raw === undefined) return [];
  if (raw.length > MEMO_VALUE) return ops(raw, from, to);
  const key = `${from}\0${to}\0${raw}`;
  const hit = memo.get(key);
  if (hit) return hit;
  const made = deepFreeze(ops(raw, from, to));
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
  memo.set(key, made);
  return made;
}
