/**
 * meshgate's version (package.json), the Node.js running it, and the git commit when one was recorded at build time
 * — `build-info.json` next to package.json, `{"commit": "…", "chart": "meshgate 0.2.0", "image": "…"}`, written by
 * the release step (scripts/release.ts) into the image and the single-file CLI — or, in a source checkout, the
 * commit its .git names. Read from files only: git is never run (the image has none, and a version must not depend
 * on a tool being on PATH). In the single-file CLI (a Node single executable application) package.json and
 * build-info.json are its embedded assets. `meshgate version` prints it; every daemon exports it as
 * meshgate_build_info.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getAsset, isSea } from 'node:sea';

/** The dir of package.json: the checkout, or /app in the image (the single executable's own dir there). */
export const PACKAGE_ROOT = join(import.meta.dirname, '..', '..');
const COMMIT = /^[0-9a-f]{7,64}$/;

export interface VersionInfo {
  version: string;
  commit?: string;
  /** Where the commit came from: build-info.json, or a source checkout's .git. */
  commitSource?: 'build-info.json' | 'git checkout';
  /** The chart this build was released with, "meshgate 0.2.0" (build-info.json of a release). */
  chart?: string;
  /** The image reference this build was released as (build-info.json of a release). */
  image?: string;
  node: string;
  /**
   * The Node.js and V8 flags this process runs with (its command line's, then NODE_OPTIONS'), when any: the image
   * and the single-file CLI set a 2 MiB semi-space (scripts/release-cli.ts NODE_FLAGS), without which a large
   * `meshgate check` peaks at 1.6× the memory. Shown so a report of memory says which flags were in force.
   */
  nodeFlags?: string[];
  platform: string;
}

/** The flags of this process: those before the script, then NODE_OPTIONS' (which Node applies too). */
function nodeFlags(): string[] {
  const fromEnv = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((f) => f.startsWith('-'));
  return [...process.execArgv, ...fromEnv];
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** A file of the build: beside package.json, or an asset of the single executable. */
function buildFile(root: string, name: string): string | undefined {
  if (!isSea()) return readText(join(root, name));
  try {
    return getAsset(name, 'utf8');
  } catch {
    return undefined;
  }
}

/** A release's chart ("name version") and image reference: printable words only, else left out. */
const RELEASE_TEXT = /^[\w.@:/+ -]{1,300}$/;

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

export function versionInfo(root = PACKAGE_ROOT): VersionInfo {
  const pkg = JSON.parse(buildFile(root, 'package.json') ?? '{}') as { version?: string };
  const info: VersionInfo = {
    version: pkg.version ?? 'unknown',
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
  };
  const flags = nodeFlags();
  if (flags.length > 0) info.nodeFlags = flags;
  let built: { commit?: unknown; chart?: unknown; image?: unknown } | undefined;
  try {
    built = JSON.parse(buildFile(root, 'build-info.json') ?? 'null') as typeof built;
  } catch {
    built = undefined;
  }
  for (const key of ['chart', 'image'] as const) {
    const v = built?.[key];
    if (typeof v === 'string' && RELEASE_TEXT.test(v)) info[key] = v;
  }
  if (typeof built?.commit === 'string' && COMMIT.test(built.commit))
    return { ...info, commit: built.commit, commitSource: 'build-info.json' };
  const checkout = isSea() ? undefined : checkoutCommit(root);
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
