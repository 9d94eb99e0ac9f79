/**
 * `meshgate check`, `check --audit` and `explain` against the bench's cluster, each a child process of the tree as
 * the image holds it, as an operator runs them from outside: wall time, peak RSS (sampled every SAMPLE_MS from
 * /proc) and exit code — under the image's Node flags (its ENTRYPOINT and NODE_OPTIONS: a 2 MiB young generation,
 * as in `kubectl run` of the image), and with none (`node bin/meshgate.js` from a clone or npm). The flags change the
 * peak, not what is held: a page of pods judged item by item leaves the young generation's garbage, which V8's
 * default 16 MiB semi-space lets grow by tens of MiB before a scavenge.
 */
import { spawn } from 'node:child_process';
import { rssBytes } from '../footprint/daemons.ts';
import type { ImageTree } from '../footprint/image.ts';
import { imageFlags } from '../footprint/launch.ts';

const SAMPLE_MS = 100;
const MiB = 1024 * 1024;
/** A CLI run longer than this has failed this size. */
const TIMEOUT_MS = 600_000;

export interface CliFigures {
  command: string;
  /** Which tree ran it: this one, or --before REF's. */
  tree: string;
  /** The Node flags it ran with: the image's, or none. */
  flags: string;
  seconds: number;
  peakMiB: number;
  exit: number | string;
  /** The last lines of stderr when it failed (a connection error, an internal error). */
  stderr?: string;
}

export function runCli(tree: ImageTree, argv: string[], flags: readonly string[] = []): Promise<CliFigures> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...flags, tree.entry, ...argv], {
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
        flags: flags.length ? flags.join(' ') : 'no flags',
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
  const image = imageFlags(tree.dir);
  const out: CliFigures[] = [];
  for (const flags of [[...image.entry, ...image.nodeOptions], []])
    for (const argv of runs) {
      const f = await runCli(tree, argv, flags);
      log(`  ${describeCli(f)}${f.stderr ? `\n    ${f.stderr}` : ''}`);
      out.push(f);
    }
  return out;
}

export function describeCli(f: CliFigures): string {
  const command = f.command.replace(/ --config=\S+/, '');
  return `${command} (${f.tree}, ${f.flags}): ${f.seconds.toFixed(1)} s, peak ${f.peakMiB.toFixed(1)} MiB, exit ${f.exit}`;
}
