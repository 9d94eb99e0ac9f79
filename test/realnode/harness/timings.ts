// Wall-clock figures of a run's parts, printed at the end (never asserted: the machine is shared).
export class Timings {
  readonly entries: { what: string; ms: number }[] = [];

  sync<T>(what: string, fn: () => T): T {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      this.entries.push({ what, ms: performance.now() - t0 });
    }
  }

  async async<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.entries.push({ what, ms: performance.now() - t0 });
    }
  }

  report(): string {
    const width = Math.max(...this.entries.map((e) => e.what.length), 10);
    return this.entries.map((e) => `  ${e.what.padEnd(width)}  ${(e.ms / 1000).toFixed(2).padStart(7)} s`).join('\n');
  }
}
