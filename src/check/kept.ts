/**
 * What `meshgate check` lists under one finding is bounded: at 15,000 Nodes and 150,000 pods a finding can concern
 * every one of them, and listing them all made the report (and what the check held to write it) grow with the
 * cluster (issue 32). Each finding keeps its first ITEMS_KEPT items and counts the rest; its message gives the full
 * count, and the report says how many were left off (report.ts CheckResult.omitted). Pure.
 */

/** Items one finding lists, JSON included: far more than anyone reads, and a few tens of KB at most. */
export const ITEMS_KEPT = 100;

/** The first `max` things added, and how many were added in all. */
export class Kept<T> {
  readonly items: T[] = [];
  #total = 0;
  readonly #max: number;

  constructor(max = ITEMS_KEPT) {
    this.#max = max;
  }

  add(t: T): void {
    this.#total++;
    if (this.items.length < this.#max) this.items.push(t);
  }

  get total(): number {
    return this.#total;
  }

  /** Added but not kept. */
  get omitted(): number {
    return this.#total - this.items.length;
  }
}

/** `n` with thousands separated, as the report writes counts. */
export const count = (n: number) => n.toLocaleString('en-US');
