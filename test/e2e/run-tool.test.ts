// runTool, which every helm, kubectl and promtool call of the tests goes through: a tool that exits without reading
// its input is a result (its exit code and stderr), never an uncaught EPIPE that fails the whole test run.
import { describe, expect, it } from 'vitest';
import { runTool } from './harness/net.ts';

describe('runTool', () => {
  it('a tool that exits without reading 4 MiB of input: its exit code, and no uncaught error', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      // More than a pipe holds (64 KiB), so the write is still pending when the tool exits.
      const r = await runTool('sh', ['-c', 'echo refused >&2; exit 3'], { input: 'x'.repeat(4 * 1024 * 1024) });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('refused');
      // An EPIPE surfaces on a later tick than the exit.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('a tool that reads its input gets all of it', async () => {
    const r = await runTool('wc', ['-c'], { input: 'y'.repeat(100_000) });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('100000');
  });
});
