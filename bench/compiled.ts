/**
 * The benchmark server as the image runs meshgate (`npm run bench`, `--peers`, `--burst`): JavaScript compiled by
 * tsc, so Node loads no type stripper (the Dockerfile ships dist/ only; tsconfig.build.json), under the Node flags
 * the image sets. Peers are compared by memory too, and the stripper is ~20 MiB of a Node process. The whole tree
 * is compiled (bench/server.ts imports test/support) into .cache/, inside the checkout, so the compiled files
 * resolve node_modules and package.json's "type": "module" as the sources do.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../test/e2e/harness/binaries.ts';
import { envPairs, parseDockerfile } from '../scripts/dockerfile.ts';

export interface CompiledServer {
  script: string;
  /** Node flags: the image's ENTRYPOINT flags and ENV NODE_OPTIONS, read from the Dockerfile's runtime stage. */
  execArgv: string[];
}

let compiled: CompiledServer | undefined;

/** The image's Node flags: those its ENTRYPOINT gives node before the script, then its NODE_OPTIONS (runtime ENV). */
function imageNodeFlags(): string[] {
  const runtime = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')).at(-1)!;
  let options: string[] = [];
  let entry: string[] = [];
  for (const ins of runtime.instructions) {
    // The last of each wins, as in the image; Node splits NODE_OPTIONS at spaces.
    if (ins.op === 'ENV')
      for (const [k, v] of envPairs(ins)) if (k === 'NODE_OPTIONS') options = v.split(/\s+/).filter(Boolean);
    if (ins.op === 'ENTRYPOINT') entry = (JSON.parse(ins.args) as string[]).slice(1).filter((a) => a.startsWith('-'));
  }
  return [...entry, ...options];
}

/** The compiled bench/server.js and the image's Node flags, compiled on first use (~15 s) in this run. */
export function compiledServer(log: (s: string) => void): CompiledServer {
  if (compiled) return compiled;
  const out = join(repoRoot, '.cache', 'bench-dist');
  rmSync(out, { recursive: true, force: true });
  const execArgv = imageNodeFlags();
  log(
    `compiling the tree with tsc into ${out}: meshgate's bench server runs compiled JavaScript with ${execArgv.join(' ') || 'no Node flags'}, as the image does`,
  );
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  const emit = ['--noEmit', 'false', '--outDir', out, '--rewriteRelativeImportExtensions'];
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', ...emit], { cwd: repoRoot, stdio: 'inherit' });
  compiled = { script: join(out, 'bench', 'server.js'), execArgv };
  return compiled;
}
