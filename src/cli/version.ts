/**
 * `meshgate version` and `meshgate --version`: meshgate's version (package.json), the Node.js running it, and the
 * git commit when one was recorded at build time — `build-info.json` next to package.json, `{"commit": "…"}`,
 * written by the image build — or, in a source checkout, the commit its .git names. Read from files only: git
 * is never run (the image has none, and a version must not depend on a tool being on PATH).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseFlags, UsageError } from './args.ts';
import { parseOptions } from './commands.ts';
import type { CliIO } from './io.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const COMMIT = /^[0-9a-f]{7,64}$/;

export const USAGE = `usage: meshgate version [-o text|json]

Prints meshgate's version, the Node.js version and the git commit it was built from (when recorded).
'meshgate --version' prints the same on one line.

flags:
  -o, --output FORMAT   text | json (default text)

examples:
  meshgate version
  meshgate version -o json | jq -r .commit
`;

export interface VersionInfo {
  version: string;
  commit?: string;
  /** Where the commit came from: build-info.json, or a source checkout's .git. */
  commitSource?: 'build-info.json' | 'git checkout';
  node: string;
  platform: string;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** HEAD of a checkout: a detached commit, or the branch's loose ref, or its line in packed-refs. */
function checkoutCommit(root: string): string | undefined {
  const head = readText(join(root, '.git', 'HEAD'))?.trim();
  if (!head) return undefined;
  if (COMMIT.test(head)) return head;
  const ref = /^ref: (refs\/[\w./-]+)$/.exec(head)?.[1];
  if (!ref || ref.includes('..')) return undefined;
  const loose = readText(join(root, '.git', ref))?.trim();
  if (loose && COMMIT.test(loose)) return loose;
  const packed = readText(join(root, '.git', 'packed-refs'))
    ?.split('\n')
    .find((l) => l.endsWith(` ${ref}`))
    ?.split(' ')[0];
  return packed && COMMIT.test(packed) ? packed : undefined;
}

export function versionInfo(root = ROOT): VersionInfo {
  const pkg = JSON.parse(readText(join(root, 'package.json')) ?? '{}') as { version?: string };
  const info: VersionInfo = {
    version: pkg.version ?? 'unknown',
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
  };
  let built: { commit?: unknown } | undefined;
  try {
    built = JSON.parse(readText(join(root, 'build-info.json')) ?? 'null') as { commit?: unknown } | undefined;
  } catch {
    built = undefined;
  }
  if (typeof built?.commit === 'string' && COMMIT.test(built.commit))
    return { ...info, commit: built.commit, commitSource: 'build-info.json' };
  const checkout = checkoutCommit(root);
  return checkout ? { ...info, commit: checkout, commitSource: 'git checkout' } : info;
}

/** `meshgate --version`: one line. */
export function versionLine(v: VersionInfo = versionInfo()): string {
  const commit = v.commit ? `commit ${v.commit.slice(0, 12)}, ` : '';
  return `meshgate ${v.version} (${commit}node ${v.node}, ${v.platform})\n`;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  let output: string | undefined;
  try {
    const { values } = parseFlags(argv, parseOptions('version'));
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    output = values.output as string | undefined;
    if (output !== undefined && output !== 'text' && output !== 'json')
      throw new UsageError(`--output must be text or json, not "${output}"`);
  } catch (err) {
    io.stderr(`meshgate version: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const v = versionInfo();
  if (output === 'json') {
    io.stdout(`${JSON.stringify(v, null, 2)}\n`);
    return 0;
  }
  const commit = v.commit ? `${v.commit} (${v.commitSource})` : 'unknown (no build-info.json)';
  io.stdout(`meshgate ${v.version}\n  commit:   ${commit}\n  node:     ${v.node}\n  platform: ${v.platform}\n`);
  return 0;
}
