/**
 * `npm run bench -- --crafted [--before REF]`: part 2's crafted reviews alone (bench/crafted.ts), CPU ms per review
 * through both webhooks; with --before, through REF's tree as well, in the same run and from the same inputs, for
 * the before/after figures of a change. REF's slow reviews are timed once (a second run of a review that takes
 * seconds says nothing new), so a REF from before issue 21 takes minutes.
 */
import { writeFileSync } from 'node:fs';
import { extractTree } from './compare/tree.ts';
import type { CraftedRow } from './crafted.ts';
import { runCrafted, slowestCrafted } from './pathological.ts';
import { craftedTable } from './report.ts';

export function craftedMain(ref: string | undefined, resultsDir: string, log: (s: string) => void): void {
  let before: CraftedRow[] | undefined;
  let commit: string | undefined;
  if (ref) {
    const tree = extractTree(ref);
    commit = tree.commit;
    try {
      log(`crafted reviews through ${ref} (${tree.commit}) …`);
      before = runCrafted(tree.dir);
    } finally {
      tree.remove();
    }
  }
  log('crafted reviews through this checkout …');
  const after = runCrafted();
  log(craftedTable(after, before));
  const file = `${resultsDir}crafted.json`;
  writeFileSync(
    file,
    `${JSON.stringify({ generatedAt: new Date().toISOString(), before: ref ? { ref, commit, rows: before } : undefined, after, slowest: slowestCrafted(after) }, null, 2)}\n`,
  );
  log(`JSON: ${file}`);
}
