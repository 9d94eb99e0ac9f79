// `npm run release`: what a user installs, built from this checkout into release/ (git-ignored; `--out DIR` for
// another dir), with no Docker engine and no registry:
//   image/                           meshgate's image as an OCI image layout (scripts/release-image.ts), named
//                                    <values image.repository>:<Chart appVersion>, the chart's default reference
//   meshgate-image-<v>.oci.tar       the same layout as one archive (skopeo copy oci-archive:, ctr images import)
//   meshgate-<chart version>.tgz     the chart, packaged by `helm package`
//   meshgate                         the CLI as one executable (scripts/release-cli.ts): no Node, no clone
//   release.json, SHA256SUMS         what was built, its digests and sizes; the step's timings
// The image and the CLI carry build-info.json naming the chart and the image reference (`meshgate version`).
// Refuses to release when the chart's appVersion is not package.json's version: the chart would run another image
// than the one built. Push with your own tools (docs/install.md, "Install from a registry"):
//   crane push release/image REGISTRY/meshgate/meshgate:0.1.0
//   helm push release/meshgate-0.2.0.tgz oci://REGISTRY/charts
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { type ChartRelease, chartRelease } from '../src/util/release-info.ts';
import { buildReleaseCli } from './release-cli.ts';
import { buildReleaseImage, DISTROLESS, type ReleaseImage } from './release-image.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export interface ReleaseFacts extends ChartRelease {
  /** package.json version. */
  version: string;
  commit?: string;
  /** What `meshgate version` prints from build-info.json. */
  buildInfo: Record<string, string>;
}

/** The chart's and package.json's versions, checked against each other. */
export function releaseFacts(root = repoRoot): ReleaseFacts {
  const chartDir = join(root, 'charts', 'meshgate');
  const rel = chartRelease(
    parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')),
    parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')),
    chartDir,
  );
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  if (rel.appVersion !== version)
    throw new Error(
      `charts/meshgate/Chart.yaml appVersion is ${rel.appVersion} but package.json's version is ${version}: the ` +
        `chart would run an image other than the one this release builds. Make them equal.`,
    );
  let commit: string | undefined;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    commit = undefined; // not a git checkout: build-info.json names no commit
  }
  const buildInfo: Record<string, string> = {
    chart: `${rel.chart} ${rel.chartVersion}`,
    image: rel.image,
    ...(commit ? { commit } : {}),
  };
  return { ...rel, version, commit, buildInfo };
}

/** The OCI annotations a registry UI shows, plus what the base really is. */
export function imageLabels(f: ReleaseFacts): Record<string, string> {
  return {
    'org.opencontainers.image.title': 'meshgate',
    'org.opencontainers.image.version': f.version,
    'org.opencontainers.image.source': 'https://github.com/meshgate/meshgate',
    'org.opencontainers.image.licenses': 'Apache-2.0',
    ...(f.commit ? { 'org.opencontainers.image.revision': f.commit } : {}),
    // Honest about the stand-in: the Dockerfile's base cannot be pulled here.
    'org.opencontainers.image.base.name': `stand-in for ${DISTROLESS}: Node ${process.version} and its libraries`,
  };
}

/** Builds meshgate's image for `facts` into `layout`: what the release and the real-node tier run. */
export function buildImage(facts: ReleaseFacts, layout: string): Promise<ReleaseImage> {
  return buildReleaseImage({ ref: facts.image, layout, buildInfo: facts.buildInfo, labels: imageLabels(facts) });
}

/** The helm the bootstrap builds (scripts/build-controlplane.sh), else one on PATH. */
async function helmBinary(): Promise<string> {
  if (process.env.HELM) return process.env.HELM;
  try {
    const { findControlPlaneBinaries } = await import('../test/e2e/harness/binaries.ts');
    return findControlPlaneBinaries().bin('helm');
  } catch (err) {
    try {
      execFileSync('helm', ['version', '--short'], { stdio: 'ignore' });
      return 'helm';
    } catch {
      throw new Error(`no helm: ${(err as Error).message}`, { cause: err });
    }
  }
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export interface ReleaseResult {
  facts: ReleaseFacts;
  out: string;
  image: ReleaseImage;
  imageArchive: string;
  chartPackage: string;
  cli: string;
  seconds: Record<string, number>;
}

/** The whole release step into `out`. */
export async function release(out: string, log: (line: string) => void = () => {}): Promise<ReleaseResult> {
  const seconds: Record<string, number> = {};
  const timed = async <T>(what: string, f: () => Promise<T> | T): Promise<T> => {
    const t0 = performance.now();
    log(`${what}…`);
    const r = await f();
    seconds[what] = Number(((performance.now() - t0) / 1000).toFixed(1));
    log(`${what}: ${seconds[what]} s`);
    return r;
  };
  const t0 = performance.now();
  const facts = releaseFacts();
  mkdirSync(out, { recursive: true });
  for (const old of ['image', 'meshgate', 'release.json', 'SHA256SUMS'])
    rmSync(join(out, old), { recursive: true, force: true });

  const image = await timed('image', () => buildImage(facts, join(out, 'image')));
  const imageArchive = join(out, `meshgate-image-${facts.version}.oci.tar`);
  await timed('image archive', () =>
    execFileSync('tar', ['-C', image.layout, '-cf', imageArchive, 'oci-layout', 'index.json', 'blobs']),
  );
  const helm = await helmBinary();
  const chartPackage = await timed('chart', () => {
    const res = execFileSync(helm, ['package', join(repoRoot, 'charts', 'meshgate'), '--destination', out], {
      encoding: 'utf8',
      env: { ...process.env, HELM_CACHE_HOME: join(out, '.helm-cache'), HELM_CONFIG_HOME: join(out, '.helm-config') },
    });
    const path = /saved it to: (\S+)/.exec(res)?.[1];
    if (!path || !existsSync(path)) throw new Error(`helm package said: ${res}`);
    return path;
  });
  rmSync(join(out, '.helm-cache'), { recursive: true, force: true });
  rmSync(join(out, '.helm-config'), { recursive: true, force: true });
  const cli = join(out, 'meshgate');
  await timed('cli', () => buildReleaseCli({ out: cli, buildInfo: facts.buildInfo, version: facts.version }));
  seconds.total = Number(((performance.now() - t0) / 1000).toFixed(1));

  const files = [imageArchive, chartPackage, cli];
  const sums = await Promise.all(files.map(async (f) => `${await sha256File(f)}  ${basename(f)}`));
  writeFileSync(join(out, 'SHA256SUMS'), `${sums.join('\n')}\n`);
  const manifest = {
    version: facts.version,
    commit: facts.commit,
    chart: {
      name: facts.chart,
      version: facts.chartVersion,
      appVersion: facts.appVersion,
      package: basename(chartPackage),
    },
    image: {
      ref: facts.image,
      digest: image.digest,
      layout: 'image',
      archive: basename(imageArchive),
      bytes: image.bytes,
      layers: image.layers.map((l) => ({ what: l.what, digest: l.digest, bytes: l.size, cached: l.reused })),
      base: `stand-in for ${DISTROLESS}`,
    },
    cli: { file: 'meshgate', bytes: statSync(cli).size, node: process.version },
    seconds,
  };
  writeFileSync(join(out, 'release.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { facts, out, image, imageArchive, chartPackage, cli, seconds };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(repoRoot, 'release') } } });
  const out = resolve(values.out);
  const log = (line: string) => process.stderr.write(`[release] ${line}\n`);
  try {
    const r = await release(out, log);
    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    process.stdout.write(
      `meshgate ${r.facts.version} released into ${out} in ${r.seconds.total} s:\n` +
        `  image  ${r.facts.image}@${r.image.digest} (${mb(r.image.bytes)} compressed, ${r.image.layers.length} layers)\n` +
        `         ${basename(r.imageArchive)}, layout image/\n` +
        `  chart  ${basename(r.chartPackage)} (${r.facts.chart} ${r.facts.chartVersion}, appVersion ${r.facts.appVersion})\n` +
        `  cli    meshgate (${mb(statSync(r.cli).size)}, Node ${process.version} single executable)\n`,
    );
  } catch (err) {
    log(`FAILED: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
