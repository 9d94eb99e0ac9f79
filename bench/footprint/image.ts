/**
 * A tree laid out as the image holds it: its src/ compiled by tsc (its own tsconfig.build.json) into `dist/`, beside
 * a copy of its `bin/meshgate.js` and no `src/`, so the entry shim picks dist/ as in the image. The directory sits
 * inside the tree, so node_modules and package.json ("type": "module") resolve as in /app. Each daemon starts with
 * the Node flags its chart and image give it (launch.ts) and NODE_ENV=production, as the image's ENV sets.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../test/e2e/harness/binaries.ts';
import { launchFlags, type Daemon } from './launch.ts';

export interface ImageTree {
  /** 'this tree' or the ref given to --before. */
  label: string;
  /** The tree's checkout (its sources say which flags its daemons take: daemons.ts). */
  dir: string;
  /** .../bin/meshgate.js of the image layout. */
  entry: string;
  /** Each daemon's Node flags, as the tree's chart and image start it. */
  flags: Record<Daemon, string[]>;
}

/** Compiles `treeDir` (this checkout or an extracted ref) into `<treeDir>/.cache/footprint-image/`. */
export async function buildImageTree(label: string, treeDir: string, log: (s: string) => void): Promise<ImageTree> {
  const out = join(treeDir, '.cache', 'footprint-image');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'bin'), { recursive: true });
  log(`compiling ${label} (${treeDir}/src) with tsc into ${out}/dist`);
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(treeDir, 'tsconfig.build.json'), '--outDir', join(out, 'dist')], {
    cwd: treeDir,
    stdio: 'inherit',
  });
  copyFileSync(join(treeDir, 'bin', 'meshgate.js'), join(out, 'bin', 'meshgate.js'));
  const flags = await launchFlags(treeDir);
  log(
    `  Node flags: ${Object.entries(flags)
      .map(([d, f]) => `${d} ${f.join(' ')}`)
      .join('; ')}`,
  );
  return { label, dir: treeDir, entry: join(out, 'bin', 'meshgate.js'), flags };
}

/** The image's ENV: NODE_OPTIONS is given as flags instead (launch.ts), so nothing else of this shell applies. */
const imageEnv = (): NodeJS.ProcessEnv => ({ ...process.env, NODE_ENV: 'production', NODE_OPTIONS: '' });

/** `meshgate <daemon's command> <argv>` of `tree` as its chart runs it; its output goes to `out`. */
export function startMeshgate(
  tree: ImageTree,
  daemon: Daemon,
  argv: string[],
  out: NodeJS.WritableStream,
): ChildProcess {
  const child = spawn(process.execPath, [...tree.flags[daemon], tree.entry, ...argv], {
    env: imageEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  return child;
}

/** The issue's yardstick: a bare Node process doing nothing, under the image's flags (those the webhook runs with). */
export function startBareNode(tree: ImageTree): ChildProcess {
  return spawn(process.execPath, [...tree.flags.webhook, '-e', 'setInterval(() => {}, 1e3)'], {
    env: imageEnv(),
    stdio: 'ignore',
  });
}

export function stopChild(child: ChildProcess, ms = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Kills leftover children by pid when the bench dies early (never by name). */
export function killOnExit(children: ChildProcess[]): void {
  process.once('exit', () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
}
