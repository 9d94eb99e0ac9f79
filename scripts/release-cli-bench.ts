// Which form of the CLI starts fastest: each candidate runs `meshgate check --help` and `meshgate version` N times
// (default 15, interleaved so load on the machine falls on all alike), and the medians of wall time, CPU time
// (user + system) and peak RSS are printed, with the ratio to the clone's. Candidates:
//   clone        node bin/meshgate.js from a checkout: Node strips the TypeScript of src/ (today's way)
//   dist         node bin/meshgate.js on src/ compiled by tsconfig.build.json (the image's way)
//   bundle       node on one esbuild bundle (minified CommonJS, scripts/release-cli.ts)
//   sea          that bundle as a single executable, no code cache
//   sea+cache    the same with V8's code cache in the blob: what `npm run release` ships
// (useSnapshot, a V8 startup snapshot of the bundle, cannot be built: the bundle loads node:http at its top level,
// whose HTTPParser binding Node cannot serialise.)
//   node scripts/release-cli-bench.ts [--runs N]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildSea, bundleCli } from './release-cli.ts';
import { compiledSources } from './release-image.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const node = join(repoRoot, 'node_modules/.bin/node');

interface Sample {
  wall: number;
  cpu: number;
  rssMb: number;
}

/** One run under GNU time: wall seconds, user + system seconds, peak RSS. */
function measure(cmd: string[]): Sample {
  const res = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', ...cmd], { encoding: 'utf8', cwd: tmpdir() });
  if (res.status !== 0) throw new Error(`${cmd.join(' ')} failed (${res.status}): ${res.stderr}`);
  const [wall, user, sys, kb] = res.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wall, cpu: user + sys, rssMb: kb / 1024 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
const work = mkdtempSync(join(tmpdir(), 'meshgate-cli-bench-'));
try {
  // dist: the image's /app layout (bin/ + dist/ + package.json, node_modules beside it).
  const app = join(work, 'app');
  mkdirSync(app);
  cpSync(join(repoRoot, 'bin'), join(app, 'bin'), { recursive: true });
  cpSync(compiledSources(), join(app, 'dist'), { recursive: true });
  cpSync(join(repoRoot, 'package.json'), join(app, 'package.json'));
  symlinkSync(join(repoRoot, 'node_modules'), join(app, 'node_modules'));
  const bundle = join(work, 'meshgate-cli.cjs');
  await bundleCli({ outfile: bundle });
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'meshgate', version: 'bench' }));
  const assets = { 'package.json': join(work, 'package.json') };
  buildSea({ main: bundle, out: join(work, 'sea'), assets, useCodeCache: false });
  buildSea({ main: bundle, out: join(work, 'sea-cache'), assets, useCodeCache: true });

  const candidates: Record<string, string[]> = {
    clone: [node, join(repoRoot, 'bin/meshgate.js')],
    dist: [node, join(app, 'bin/meshgate.js')],
    bundle: [node, bundle],
    sea: [join(work, 'sea')],
    'sea+cache': [join(work, 'sea-cache')],
  };
  for (const args of [['check', '--help'], ['version']]) {
    const samples = new Map<string, Sample[]>(Object.keys(candidates).map((k) => [k, []]));
    for (let i = 0; i < runs; i++)
      for (const [name, cmd] of Object.entries(candidates)) samples.get(name)!.push(measure([...cmd, ...args]));
    const stat = (name: string) => {
      const s = samples.get(name)!;
      return {
        wall: median(s.map((x) => x.wall)),
        cpu: median(s.map((x) => x.cpu)),
        rss: median(s.map((x) => x.rssMb)),
      };
    };
    const base = stat('clone');
    process.stdout.write(`meshgate ${args.join(' ')} (median of ${runs}; ratio to clone)\n`);
    for (const name of Object.keys(candidates)) {
      const s = stat(name);
      process.stdout.write(
        `  ${name.padEnd(10)} wall ${s.wall.toFixed(2)} s (${(s.wall / base.wall).toFixed(2)})  ` +
          `cpu ${s.cpu.toFixed(2)} s (${(s.cpu / base.cpu).toFixed(2)})  ` +
          `peak RSS ${s.rss.toFixed(0)} MB (${(s.rss / base.rss).toFixed(2)})\n`,
      );
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
