// The repair controller's switches that S6 and S8 judge, turned on as the chart's values would
// (repairController.evictUnmeshed, repairController.withdrawVerdicts):
//   S8  --withdraw-verdicts: withdraw a node's verification when validator failures cluster on it
//   S6  --unmeshed-pods=evict: evict pods of opted-in namespaces that run without meshgate's redirect
// Named from the controller's own flag table, so a renamed flag fails typechecking instead of running the
// scenarios without it.
import type { QUARANTINE_FLAGS } from '../../../src/repair/flags.ts';

const set = (flag: keyof typeof QUARANTINE_FLAGS, value: string) => `--${flag}=${value}`;

export const REPAIR_SWITCHES: readonly string[] = [set('withdraw-verdicts', 'true'), set('unmeshed-pods', 'evict')];
