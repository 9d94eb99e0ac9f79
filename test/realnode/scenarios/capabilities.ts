// The repair controller's switches that S6 and S8 judge, turned on as the chart's values would
// (repairController.evictUnmeshed, repairController.withdrawVerdicts):
//   S8  --withdraw-verdicts: withdraw a node's verification when validator failures cluster on it
//   S6  --evict-unmeshed: evict pods of opted-in namespaces that run without meshgate's redirect
// Named from the controller's own flag table, so a renamed flag fails typechecking instead of running the
// scenarios without it.
import type { QUARANTINE_FLAGS } from '../../../src/repair/flags.ts';

const on = (flag: keyof typeof QUARANTINE_FLAGS) => `--${flag}=true`;

export const REPAIR_SWITCHES: readonly string[] = [on('withdraw-verdicts'), on('evict-unmeshed')];
