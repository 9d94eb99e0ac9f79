/**
 * One decision in one place (issue 35): below their admission adapters, /mutate and /validate walk through src/policy/
 * alone — the folders under it (mutate/, validate/, ambient/, judge/) and the floor it reads from, never a second
 * decision folder. scripts/walk.ts prints the same walk with its figures.
 */
import { describe, expect, it } from 'vitest';
import { BELOW, ENTRIES, folderOf, service, walk } from '../../scripts/walk.ts';

describe('the walk of a review through the decision', () => {
  const ls = service();

  it.each(ENTRIES)('%s decides inside src/policy/ alone', (entry) => {
    const w = walk(entry, Number.POSITIVE_INFINITY, ls);
    expect(w.steps.length).toBeGreaterThan(100);
    expect(w.steps.some((s) => s.startsWith('policy/'))).toBe(true);
    expect(w.decision.folders).toEqual(['admission', 'policy']);
  });

  it('counts a folder of the policy tree as policy, and the floor apart from the decision', () => {
    expect(folderOf(`${import.meta.dirname}/../../src/policy/mutate/decide.ts`)).toBe('policy');
    expect(folderOf(`${import.meta.dirname}/../../src/admission/mutate.ts`)).toBe('admission');
    expect(BELOW.has('contract') && BELOW.has('kube') && !BELOW.has('policy')).toBe(true);
  });
});
