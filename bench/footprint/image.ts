/**
 * A tree laid out as the image holds it: its src/ compiled by tsc (its own tsconfig.build.json) into `dist/`, beside
 * a copy of its `bin/meshgate.js` and no `src/`, so the entry shim picks dist/ as in the image. The directory sits
 * inside the tree, so node_modules and package.json ("type": "module") resolve as in /app. Daemons start with the
 * image's Node flags (bench/compiled.ts reads them off the Dockerfile) and NODE_ENV=production, as its ENV sets.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../test/e2e/harness/binaries.ts';
import { imageNodeFlags } from '../compiled.ts';

export interface ImageTree {
  /** 'this tree' or the ref given to --before. */
  label: string;
  /** .../bin/meshgate.js of the image layout. */
  entry: string;
}

/** Compiles `treeDir` (this checkout or an extracted ref) into `<treeDir>/.cache/footprint-image/`. */
export function buildImageTree(label: string, treeDir: string, log: (s: string) => void): ImageTree {
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
  return { label, entry: join(out, 'bin', 'meshgate.js') };
}

/** The image's Node flags, and NODE_ENV=production. */
export function imageRuntime(): { execArgv: string[]; env: NodeJS.ProcessEnv } {
  return { execArgv: imageNodeFlags(), env: { ...process.env, NODE_ENV: 'production', NODE_OPTIONS: '' } };
}

/** `meshgate <argv>` of `tree` as the image runs it; stdout and stderr go to `logFile`'s stream. */
export function startMeshgate(tree: ImageTree, argv: string[], out: NodeJS.WritableStream): ChildProcess {
  const rt = imageRuntime();
  const child = spawn(process.execPath, [...rt.execArgv, tree.entry, ...argv], {
    env: rt.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  return child;
}

/** The yardstick: a bare Node process doing nothing, under the same flags. */
export function startBareNode(): ChildProcess {
  const rt = imageRuntime();
  return spawn(process.execPath, [...rt.execArgv, '-e', 'setInterval(() => {}, 1e3)'], {
    env: rt.env,
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
