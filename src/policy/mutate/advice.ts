/**
 * What to do about each refusal, one sentence per reason code: the fix a workload's owner (or the operator) makes so
 * meshgate admits the pod. The catalogue (src/contract/codes/) declares both: what happened (REASONS) and what to
 * change (this). Shared by `meshgate check` (its audit report, `check --pre`), the workload warnings and the repair
 * controller's Events and PolicyReports, so the cluster gives the same advice wherever a refusal is read. Codes
 * without a fix get the generic sentence of `adviceFor`.
 */
import { fixesOf } from '../../contract/codes/entry.ts';
import { POD_CODES } from '../../contract/codes/index.ts';
import type { ReasonCode } from '../../contract/reasons.ts';

export const ADVICE: Partial<Record<ReasonCode, string>> = fixesOf(POD_CODES);

/** What to do about a refusal with this code (or a code meshgate does not know: from another version). */
export function adviceFor(code: string): string {
  return (
    ADVICE[code as ReasonCode] ??
    'read the reason in the message; `meshgate explain -f` on the workload says what meshgate decides and why'
  );
}
