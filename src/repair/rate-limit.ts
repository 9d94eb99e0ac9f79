/** At most `max` actions within any `windowMs`: a sliding window of the last actions' times (at most `max` kept). */
export class SlidingLimit {
  readonly #max: number;
  readonly #windowMs: number;
  #times: number[] = [];

  constructor(max: number, windowMs: number) {
    this.#max = max;
    this.#windowMs = windowMs;
  }

  /** Takes one slot at `now` if one is free. */
  take(now: number): boolean {
    this.#times = this.#times.filter((t) => now - t < this.#windowMs);
    if (this.#times.length >= this.#max) return false;
    this.#times.push(now);
    return true;
  }

  /** When the next slot frees (now, if one is free). */
  nextFreeAt(now: number): number {
    const live = this.#times.filter((t) => now - t < this.#windowMs);
    return live.length < this.#max ? now : live[0] + this.#windowMs;
  }
}
