/**
 * `meshgate check`, `check --audit` and `explain` against the bench's cluster, each a child process of the tree as
 * the image holds it, as an operator runs them from outside: wall time, peak RSS (sampled every SAMPLE_MS from
 * /proc) and exit code. The CLI's own heap is not bounded by flags: what it holds at once is what its paged reads and
 * reductions make it hold.
 */
import { spawn } from 'node:child_process';
import { rssBytes } from '../footprint/daemons.ts';
import type { ImageTree } from '../footprint/image.ts';

const SAMPLE_MS = 100;
const MiB = 1024 * 1024;
/** A CLI run longer than this has failed this size. */
const TIMEOUT_MS = 600_000;

export interface CliFigures {
  command: string;
  /** Which tree ran it: this one, or --before REF's. */
  tree: string;
  seconds: number;
  peakMiB: number;
  exit: number | string;
  /** The last lines of stderr when it failed (a connection error, an internal error). */
  stderr?: string;
}

export function runCli(tree: ImageTree, argv: string[]): Promise<CliFigures> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [tree.entry, ...argv], {
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let peak = 0;
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-2000);
  });
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(child.pid))), SAMPLE_MS);
  const killer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearInterval(sampler);
      clearTimeout(killer);
      const exit = code ?? `${signal}`;
      resolve({
        command: `meshgate ${argv.filter((a) => !a.startsWith('--kubeconfig')).join(' ')}`,
        tree: tree.label,
        seconds: (performance.now() - t0) / 1000,
        peakMiB: peak / MiB,
        exit,
        // Other codes are answers (check: 1 a check failed, which this cluster's fake nodes make so; explain: 3–5
        // the outcome); 2 is an error, a signal a kill.
        ...(exit === 2 || typeof exit === 'string' ? { stderr: stderr.trim().split('\n').slice(-5).join('\n') } : {}),
      });
    });
  });
}

/** `check`, `check --audit` and `explain` of one bound pod, as an operator runs them, each logged. */
export async function cliRuns(
  tree: ImageTree,
  kubeconfig: string,
  config: string,
  log: (s: string) => void,
): Promise<CliFigures[]> {
  const common = [`--kubeconfig=${kubeconfig}`, `--config=${config}`];
  const runs = [
    ['check', ...common, '--output=json'],
    ['check', '--audit', ...common, '--output=json'],
    ['explain', 'pod/app-1', '--namespace=team-1', ...common],
  ];
  const out: CliFigures[] = [];
  for (const argv of runs) {
    const f = await runCli(tree, argv);
    log(
      `  ${f.command} (${f.tree}): ${f.seconds.toFixed(1)} s, peak ${f.peakMiB.toFixed(1)} MiB, exit ${f.exit}${f.stderr ? `\n    ${f.stderr}` : ''}`,
    );
    out.push(f);
  }
  return out;
}
