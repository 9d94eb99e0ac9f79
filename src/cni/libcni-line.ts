/**
 * How a node is judged by libcni line: by the line of its runtime's release (src/cni/runtime-version.ts) or one
 * named by flag; when neither is known, **verified only when every line verifies it** — when some line does not,
 * the verdict is their common reason if all give the same one, else `libcni_lines_disagree`, and the evidence lists
 * what each line made of the dir. A node reporting another runtime than the one emulated is never verified
 * (`runtime_mismatch`).
 */
import type { CniReasonCode } from './reasons.ts';
import { parseRuntimeVersion } from './runtime-version.ts';
import { LIBCNI_LINES, type LibcniLine, type LineEvidence, type Runtime, type ChainVerdict } from './types.ts';
import { verdictMessage } from './verify.ts';

/** What a node is judged by: one line (with the runtime version it came from, if any), or every line. */
export type LineChoice = { libcni: LibcniLine | 'all'; runtimeVersion?: string; runtimeMismatch?: string };

/**
 * The choice for a runtime meshgate emulates (`runtime`), a line named by flag (`requested`, 'auto' when none) and
 * the Node's containerRuntimeVersion (undefined or "" when not known). A named line wins; a Node reporting another
 * runtime than `runtime` is a mismatch, judged by every line and never verified.
 */
export function chooseLine(
  runtime: Runtime,
  requested: LibcniLine | 'auto',
  containerRuntimeVersion: string | undefined,
): LineChoice {
  const reported = containerRuntimeVersion ? parseRuntimeVersion(containerRuntimeVersion) : {};
  const runtimeVersion = containerRuntimeVersion || undefined;
  if (reported.runtime !== undefined && reported.runtime !== runtime)
    return { libcni: 'all', runtimeVersion, runtimeMismatch: `told ${runtime}, the node reports ${runtimeVersion}` };
  if (requested !== 'auto') return { libcni: requested };
  return reported.line ? { libcni: reported.line, runtimeVersion } : { libcni: 'all', runtimeVersion };
}

/** The verdict under a choice; `verifyLine` judges the snapshot by one line (pure). */
export function judgeByLine(choice: LineChoice, verifyLine: (line: LibcniLine) => ChainVerdict): ChainVerdict {
  const { runtimeVersion } = choice;
  const stamp = (v: ChainVerdict, extra: object = {}): ChainVerdict => ({
    ...v,
    evidence: { ...v.evidence, ...(runtimeVersion ? { runtimeVersion } : {}), ...extra },
  });
  if (choice.libcni !== 'all') return stamp(verifyLine(choice.libcni));
  const each = LIBCNI_LINES.map((line) => ({ line, verdict: verifyLine(line) }));
  const lines = Object.fromEntries(
    each.map(({ line, verdict: v }): [LibcniLine, LineEvidence] => [
      line,
      { reason: v.reason, ...(v.evidence.file ? { file: v.evidence.file } : {}), plugins: v.evidence.plugins },
    ]),
  );
  const first = each[0].verdict;
  const all = stamp(first, { libcni: 'all', lines });
  if (choice.runtimeMismatch) return unverified(all, 'runtime_mismatch', choice.runtimeMismatch);
  if (each.every(({ verdict: v }) => v.reason === first.reason)) return all;
  const detail = each
    .map(({ line, verdict: v }) => `libcni ${line}: ${v.reason}${v.evidence.file ? ` (${v.evidence.file})` : ''}`)
    .join('; ');
  return unverified(all, 'libcni_lines_disagree', detail);
}

function unverified(v: ChainVerdict, reason: CniReasonCode, detail: string): ChainVerdict {
  return { verified: false, reason, message: verdictMessage(reason, undefined, detail), detail, evidence: v.evidence };
}

/** For `check-node`'s and the agent's flag: a line, or 'auto' (from the runtime's version). */
export function isLibcniChoice(value: string): value is LibcniLine | 'auto' {
  return value === 'auto' || (LIBCNI_LINES as readonly string[]).includes(value);
}
