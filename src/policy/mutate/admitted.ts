/**
 * A pod as both webhooks would admit it at CREATE: the mutating decision (decide.ts), its patch applied as the
 * apiserver applies it, then the validating posture check (policy/posture.ts) on the result. Shared by `meshgate
 * check --pre` (existing pods, recreated) and the judgement of workload templates at apply time (template.ts), so
 * both say what the webhooks would. Pure.
 */
import jsonpatch from 'fast-json-patch';
import type { Compiled } from '../../config/compile.ts';
import type { ReasonCode } from '../../contract/reasons.ts';
import type { NodeFacts } from '../../facts/node-facts.ts';
import { parsePod } from '../../pod/parse.ts';
import { checkPosture } from '../posture.ts';
import type { RedirectOptions } from '../redirect.ts';
import { decide, type Decision } from './decide.ts';

export type Admitted =
  | { kind: 'refused'; reason: ReasonCode; message: string; decision?: Decision }
  | { kind: 'admitted'; decision: Decision };

/**
 * `raw`: the pod as its author (or controller) would send it, as plain JSON (left unchanged: the patch is applied
 * to a copy). `where` names it in the error of a body that is not a pod. `o.namespaceLabels`: from the webhook's
 * namespace cache, when it has them (Istio ambient's enrolment reads them).
 */
export function asAdmitted(
  raw: object,
  namespace: string,
  where: string,
  facts: NodeFacts,
  cfg: Compiled,
  o: RedirectOptions & { namespaceLabels?: Readonly<Record<string, string>> } = {},
): Admitted {
  const parsed = parsePod(raw, where);
  if (!parsed.ok) return { kind: 'refused', reason: 'invalid_object', message: parsed.error };
  const labels = o.namespaceLabels ? { namespaceLabels: o.namespaceLabels } : {};
  const decision = decide({ pod: parsed.pod, namespace, ...labels }, facts, cfg, o);
  if (decision.kind === 'deny')
    return { kind: 'refused', reason: decision.reason, message: decision.message, decision };
  let final = raw;
  if (decision.kind === 'patch') {
    try {
      final = jsonpatch.applyPatch(raw, jsonpatch.deepClone(decision.ops), true, false).newDocument;
    } catch (err) {
      return {
        kind: 'refused',
        reason: 'invalid_object',
        message: `meshgate's patch does not apply: ${(err as Error).message}`,
        decision,
      };
    }
  }
  const again = parsePod(final, where);
  if (!again.ok) return { kind: 'refused', reason: 'invalid_object', message: again.error, decision };
  const posture = checkPosture({ pod: again.pod, namespace, ...labels }, facts, cfg);
  if (!posture.ok) return { kind: 'refused', reason: posture.reason, message: posture.message, decision };
  return { kind: 'admitted', decision };
}
