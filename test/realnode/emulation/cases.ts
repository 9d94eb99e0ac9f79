// The cases of the emulation check: every file of the shared corpus (../shared/corpus/cni) and the generated
// variants of the CNI oracle test (test/cni/oracle-cases.ts, oracle-dirs.ts: priority files, an unparsable first
// file, missing binaries, keys that differ only in case, deep nesting, out-of-range numbers, wrong field types,
// bytes Go decodes specially, odd shapes, seeded random documents) — those a containerd with max_conf_num 1 and one
// bin dir can run. The oracle proved src/cni against libcni's code; this runs the cases through containerd itself.
// A real sandbox per case costs about half a second, so by default each generated category is sampled evenly
// (SAMPLE_PER_CATEGORY); MESHGATE_REALNODE_EMULATION=all runs every case (~3300: about half an hour).
import { type DirCase, fileCases } from '../../cni/oracle-cases.ts';
import { dirCases } from '../../cni/oracle-dirs.ts';

export interface EmulationCase extends DirCase {
  category: string;
}

/** Per generated category; the corpus and the directory cases always run in full. */
const SAMPLE_PER_CATEGORY = 24;

/** The oracle's case ids start with what they vary; that is the category. */
function categoryOf(id: string): string {
  const rules: Array<[RegExp, string]> = [
    [/^corpus /, 'corpus'],
    [/^plugin dir: /, 'plugin dirs (libcni >= 1.3 only)'],
    [/^(conflist )?plugin |^conflist top (?!keys|number)/, 'wrong field types'],
    [/^(keys |folded key|conflist top keys|conflist duplicate)/, 'keys differing in case'],
    [/number /, 'out-of-range numbers'],
    [/^depth /, 'deep nesting'],
    [/^random /, 'random documents'],
    [/^(invalid UTF-8|escape )/, 'bytes Go treats specially'],
    [/^binaries: /, 'missing binaries'],
    [/\(max_conf_num \d\)$/, 'priority files'],
  ];
  return rules.find(([re]) => re.test(id))?.[1] ?? 'shapes and syntax';
}

/** What one containerd (one bin dir, max_conf_num 1) can run: no second bin dir, no other max_conf_num. */
function runnable(c: DirCase): boolean {
  if ((c.maxConfNum ?? 1) !== 1) return false;
  return Object.keys(c.bins ?? {}).every((k) => k.startsWith('0/'));
}

/** Every n-th case of a category, so a sample still covers its whole range. */
function evenly<T>(xs: T[], n: number): T[] {
  if (xs.length <= n) return xs;
  return Array.from({ length: n }, (_, i) => xs[Math.floor((i * xs.length) / n)]);
}

export function emulationCases(all = process.env.MESHGATE_REALNODE_EMULATION === 'all'): {
  cases: EmulationCase[];
  total: number;
} {
  const every = [...fileCases(), ...dirCases()].filter(runnable).map((c) => ({ ...c, category: categoryOf(c.id) }));
  if (all) return { cases: every, total: every.length };
  const byCategory = new Map<string, EmulationCase[]>();
  for (const c of every) byCategory.set(c.category, [...(byCategory.get(c.category) ?? []), c]);
  const full = new Set(['corpus', 'priority files', 'missing binaries', 'plugin dirs (libcni >= 1.3 only)']);
  const cases = [...byCategory].flatMap(([cat, xs]) => (full.has(cat) ? xs : evenly(xs, SAMPLE_PER_CATEGORY)));
  return { cases, total: every.length };
}
