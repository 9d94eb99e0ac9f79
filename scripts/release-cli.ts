// The CLI as one executable file: a Node.js single executable application (SEA). esbuild bundles src/cli into one
// minified CommonJS script (what Node 24's SEA runs: one script, require() of built-ins only), Node writes it with a
// V8 code cache into a preparation blob (`node --experimental-sea-config`), and postject injects the blob into a
// copy of Node 24's binary. package.json and build-info.json ride along as SEA assets (src/util/version.ts reads
// them there). Why this form, measured against the others (docs/install.md "The single-file CLI"):
// `scripts/release-cli-bench.ts`.
// Two source-level facts the bundle needs, both rewritten here and checked so a change cannot slip past:
//  - import() is lowered to require() (esbuild `supported: {'dynamic-import': false}`): the commands stay lazy
//    (loaded when run) and a code cache cannot serve import();
//  - src/config/load.ts loads YAML lazily by createRequire(import.meta.url): rewritten to require(), so esbuild
//    bundles it; import.meta.dirname (src/util/version.ts: package.json's dir) becomes the executable's dir.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string) => join(repoRoot, 'node_modules', '.bin', name);
/**
 * The Node.js flags every meshgate process of a release runs with: the image's NODE_OPTIONS (Dockerfile), the single
 * executable's execArgv (below) and bin/meshgate.js's shebang; test/release/node-flags.test.ts holds the three
 * together. A 2 MiB young-generation semi-space instead of V8's 16: `meshgate check` at 5,000 Nodes and 50,000 pods
 * peaks at 132 MiB with it, 214 without (docs/benchmarks.md §9), at no measured CPU cost per review.
 */
export const NODE_FLAGS = ['--max-semi-space-size=2'] as const;

/** The sentinel Node's binary carries for a SEA blob (doc/api/single-executable-applications.md). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const LAZY_YAML = 'createRequire(import.meta.url)(';

export interface BundleOptions {
  outfile: string;
  minify?: boolean;
}

/** Bundles the CLI into one CommonJS script that runs `meshgate <argv>` (bin/meshgate.js's job in a checkout). */
export async function bundleCli(o: BundleOptions): Promise<void> {
  await build({
    stdin: {
      contents:
        "import { runProcess } from './src/cli/main.ts';\n" +
        'runProcess(process.argv.slice(2)).then((code) => { process.exitCode = code; });\n',
      resolveDir: repoRoot,
      loader: 'ts',
      sourcefile: 'meshgate-cli.ts',
    },
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    minify: o.minify ?? true,
    outfile: o.outfile,
    supported: { 'dynamic-import': false },
    define: { 'import.meta.dirname': '__dirname' },
    legalComments: 'none',
    logLevel: 'error',
    plugins: [
      {
        name: 'meshgate-lazy-yaml',
        setup(b) {
          b.onLoad({ filter: /[\\/]src[\\/]config[\\/]load\.ts$/ }, (args) => {
            const text = readFileSync(args.path, 'utf8');
            if (text.split(LAZY_YAML).length !== 2)
              throw new Error(
                `${args.path}: expected one ${LAZY_YAML}…) to rewrite; scripts/release-cli.ts must learn the new form`,
              );
            return { contents: text.replace(LAZY_YAML, 'require('), loader: 'ts' };
          });
          // Any other import.meta would be empty in CommonJS: refuse rather than ship a broken CLI.
          b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
            if (!args.path.startsWith(join(repoRoot, 'src'))) return undefined;
            const text = readFileSync(args.path, 'utf8');
            const uses = text.replace(/import\.meta\.dirname/g, '').replace(LAZY_YAML, '');
            if (/import\.meta\b/.test(uses.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '')))
              throw new Error(`${args.path}: uses import.meta beyond what scripts/release-cli.ts rewrites`);
            return undefined;
          });
        },
      },
    ],
  });
}

export interface SeaOptions {
  /** The bundled script. */
  main: string;
  /** The executable to write. */
  out: string;
  /** Node.js flags the executable runs with (SEA execArgv); default NODE_FLAGS. */
  execArgv?: readonly string[];
  /** SEA assets: name → file. */
  assets?: Record<string, string>;
  useCodeCache?: boolean;
}

/** Makes a single executable from a bundled script: blob by Node itself, injected into a copy of Node by postject. */
export function buildSea(o: SeaOptions): void {
  const work = `${o.out}.sea`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const blob = join(work, 'sea.blob');
    const config = join(work, 'sea-config.json');
    writeFileSync(
      config,
      JSON.stringify({
        main: o.main,
        output: blob,
        disableExperimentalSEAWarning: true,
        useCodeCache: o.useCodeCache ?? true,
        execArgv: o.execArgv ?? NODE_FLAGS,
        assets: o.assets ?? {},
      }),
    );
    const node = realpathSync(bin('node'));
    execFileSync(node, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    const tmp = `${o.out}.tmp`;
    copyFileSync(node, tmp);
    chmodSync(tmp, 0o755);
    // postject's ELF writer warns about note sections it does not name; harmless, and not ours to print.
    execFileSync(bin('postject'), [tmp, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    execFileSync('mv', ['-f', tmp, o.out]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface CliOptions {
  /** The executable to write, e.g. release/meshgate. */
  out: string;
  /** Embedded as the asset build-info.json. */
  buildInfo: Record<string, string>;
  version: string;
}

/** The single-file CLI of the release: a minified bundle, a code cache, the version facts as assets. */
export async function buildReleaseCli(o: CliOptions): Promise<{ bytes: number }> {
  const work = `${o.out}.build`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const main = join(work, 'meshgate-cli.cjs');
    await bundleCli({ outfile: main });
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'meshgate', version: o.version }));
    writeFileSync(join(work, 'build-info.json'), JSON.stringify(o.buildInfo));
    buildSea({
      main,
      out: o.out,
      assets: { 'package.json': join(work, 'package.json'), 'build-info.json': join(work, 'build-info.json') },
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { bytes: statSync(o.out).size };
}
