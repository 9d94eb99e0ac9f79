// Which of the capabilities S6 and S8 need this meshgate build has, read from its public surface: the flags
// `meshgate repair-controller --help` lists. The tier runs the repair controller as the chart would with those
// capabilities switched on; when a flag is not there, the scenario still runs (never skipped) and reports FAILED,
// naming what is missing.
//   S8  --withdraw-verdicts (chart value repairController.withdrawVerdicts): withdraw a node's verification when
//       validator failures cluster on it
//   S6  the flag whose name mentions "evict" (--evict-unmeshed): evict pods of opted-in namespaces that run without
//       meshgate's redirect; the scenario judges the behaviour either way
// Both take a value (`--withdraw-verdicts BOOL`), so they are passed as `--flag=true`; a bare boolean flag as `--flag`.
import type { Capabilities } from './common.ts';

/** The flag as the help shows it → how to pass it "on": `--x` for a boolean, `--x=true` when it takes a value. */
function enable(help: string, flag: RegExp): string | undefined {
  const line = help.split('\n').find((l) => flag.test(l.trim().split(/\s+/)[0] ?? ''));
  if (!line) return undefined;
  const [name, arg] = line.trim().split(/\s+/);
  return arg && /^[A-Z]+$/.test(arg) ? `${name}=true` : name;
}

export function capabilitiesFrom(help: string): Capabilities {
  const repairFlags: string[] = [];
  const missing: Capabilities['missing'] = {};
  const withdraw = enable(help, /^--withdraw-verdicts$/);
  if (withdraw) repairFlags.push(withdraw);
  else missing.s8 = '`meshgate repair-controller --help` lists no --withdraw-verdicts';
  const evict = enable(help, /^--[a-z-]*evict[a-z-]*$/);
  if (evict) repairFlags.push(evict);
  else missing.s6 = '`meshgate repair-controller --help` lists no flag for evicting unmeshed pods';
  return { repairFlags, missing };
}
