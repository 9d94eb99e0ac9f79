/**
 * The benchmark server as the image runs meshgate: JavaScript compiled by tsc, so Node loads no type stripper
 * (the Dockerfile ships dist/ only; tsconfig.build.json). Peers are compared by memory too, and the stripper is
 * ~20 MiB of a Node process. The whole tree is compiled (bench/server.ts imports test/support) into .cache/, inside
 * the checkout, so the compiled files resolve node_modules and package.json's "type": "module" as the sources do.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../test/e2e/harness/binaries.ts';

let compiled: string | undefined;

/** Path of the compiled bench/server.js, compiled on first use (~15 s) in this run. */
export function compiledServerScript(log: (s: string) => void): string {
  if (compiled) return compiled;
  const out = join(repoRoot, '.cache', 'bench-dist');
  rmSync(out, { recursive: true, force: true });
  log(`compiling the tree with tsc into ${out} (peers run meshgate's compiled JavaScript, as the image does)`);
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  const emit = ['--noEmit', 'false', '--outDir', out, '--rewriteRelativeImportExtensions'];
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', ...emit], { cwd: repoRoot, stdio: 'inherit' });
  compiled = join(out, 'bench', 'server.js');
  return compiled;
}
