#!/usr/bin/env node
/**
 * `npm test`'s two long tiers at once: vitest (unit, chart and e2e tests on a real apiserver with kwok nodes) and the
 * real-node tier (test/realnode/scenarios.ts: kubelets, containerd, the meshes' CNI plugins). Each runs in a network
 * namespace of its own, with its own apiservers, ports and state directories, so they share nothing but the CPUs;
 * the real-node tier mostly waits (kubelets, verdict polls, scenario windows), so the two together take little more
 * than the longer one instead of their sum (docs/development.md has the figures). vitest's output goes through as
 * it is; the real-node tier's lines are prefixed `[realnode]`. The exit code is non-zero when either tier fails, and
 * both always run to their end, so one failure does not hide another.
 *
 *   node scripts/test-tiers.ts
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

interface Tier {
  name: string;
  command: string;
  args: string[];
  /** Prefix for its output lines; undefined: its output goes through untouched. */
  prefix?: string;
}

const TIERS: Tier[] = [
  { name: 'vitest', command: 'vitest', args: ['run'] },
  { name: 'real-node tier', command: process.execPath, args: ['test/realnode/scenarios.ts'], prefix: '[realnode]' },
];

function run(t: Tier): Promise<{ tier: Tier; code: number; seconds: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(t.command, t.args, {
      stdio: t.prefix ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
    });
    if (t.prefix)
      for (const stream of [child.stdout, child.stderr])
        if (stream)
          createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${t.prefix} ${line}\n`));
    const done = (code: number) => resolve({ tier: t, code, seconds: (performance.now() - t0) / 1000 });
    child.on('error', (err) => {
      process.stderr.write(`${t.name}: could not start ${t.command}: ${err.message}\n`);
      done(127);
    });
    child.on('close', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

const t0 = performance.now();
const results = await Promise.all(TIERS.map(run));
for (const r of results)
  process.stdout.write(
    `${r.tier.name}: ${r.code === 0 ? 'passed' : `FAILED (exit ${r.code})`} in ${r.seconds.toFixed(1)} s\n`,
  );
process.stdout.write(`both tiers: ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
