/**
 * The last step of a docs generator (scripts/reasons-doc.ts, values-doc.ts, metrics-doc.ts): write the file, or,
 * with `--check`, fail when the file on disk differs from what the generator renders now.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export function writeOrCheck(path: string, text: string, generator: string, argv = process.argv): void {
  const name = relative(ROOT, path);
  if (argv.includes('--check')) {
    if (readFileSync(path, 'utf8') !== text) {
      process.stderr.write(`${name} is out of date: run node ${generator}\n`);
      process.exit(1);
    }
    return;
  }
  writeFileSync(path, text);
  process.stderr.write(`wrote ${path}\n`);
}
