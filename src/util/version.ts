/**
 * meshgate's version (package.json), the Node.js running it, and the git commit when one was recorded at build time
 * — `build-info.json` next to package.json, `{"commit": "…"}`, written by the image build — or, in a source checkout,
 * the commit its .git names. Read from files only: git is never run (the image has none, and a version must not
 * depend on a tool being on PATH). `meshgate version` prints it; every daemon exports it as meshgate_build_info.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const COMMIT = /^[0-9a-f]{7,64}$/;

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

/**
 * `meshgate_build_info{version,commit,node_version} 1`, as Kubernetes components export kubernetes_build_info and Go
 * programs go_build_info: a dashboard or alert joins it to see which build runs where (a rollout stuck half-way
 * shows two versions). commit "unknown" when none was recorded. Declared here, without a metrics library: the
 * webhook and the repair controller register it in prom-client (src/util/build-info.ts), the node agent in its own
 * registry (src/agent/exposition.ts), which keeps prom-client out of it.
 */
export const BUILD_INFO = {
  name: 'meshgate_build_info',
  help: 'Always 1: the meshgate version, git commit and Node.js version of this process',
  labelNames: ['version', 'commit', 'node_version'],
} as const;

export function buildInfoLabels(
  v: VersionInfo = versionInfo(),
): Record<(typeof BUILD_INFO.labelNames)[number], string> {
  return { version: v.version, commit: v.commit ?? 'unknown', node_version: v.node };
}
