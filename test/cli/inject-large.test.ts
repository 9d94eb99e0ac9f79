/**
 * Issue 24: `meshgate inject` on a 35 MB manifest took 46 s and 1.3 GB. A 35 MB manifest is generated in a temp dir
 * from the corpus (test/support/big-manifest.ts) and run through bin/meshgate.js as a user runs it, with
 * `--progress`. Prints wall time, CPU time and peak RSS (no timing assertion); asserts the output byte for byte, the
 * progress line, and a peak RSS under 350 MB (243–305 MiB measured here, by load) — the code before streaming took 48.8 s and 3.1 GB for this file here.
 *
 * MESHGATE_INJECT_BEFORE=<git ref> also runs that tree's inject on the same file (bench/compare/tree.ts: the tree
 * extracted with `git archive`), prints its figures beside, and checks that it wrote the same output and that the
 * old code does exceed the limit (it needs ~3 GB and ~1 min).
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { extractTree } from '../../bench/compare/tree.ts';
import { rawConfig } from '../support/config.ts';
import { type BigManifest, writeBigManifest } from '../support/big-manifest.ts';

const MIB = 1024 * 1024;
/** Generous: the streaming code peaks at ~250 MB here, most of it V8's young generation (134 MB on this host). */
const RSS_LIMIT_BYTES = 350 * 1000 * 1000;
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NODE_STATE = fileURLToPath(new URL('../golden/testdata/node-state-verified.yaml', import.meta.url));

/** Preloaded into the child: writes its peak RSS and CPU time (getrusage) to MESHGATE_USAGE_FILE as it exits. */
const USAGE_PROBE = `data:text/javascript,${encodeURIComponent(
  "import { writeFileSync } from 'node:fs';" +
    "process.on('exit', () => { const u = process.resourceUsage(); writeFileSync(process.env.MESHGATE_USAGE_FILE, " +
    'JSON.stringify({ maxRssKiB: u.maxRSS, cpuMicros: u.userCPUTime + u.systemCPUTime })); });',
)}`;

interface Run {
  code: number | null;
  stderr: string;
  wallSeconds: number;
  cpuSeconds: number;
  maxRssBytes: number;
}

let dir: string;
let manifest: BigManifest;
let input: string;
let config: string;

/** `meshgate inject` from `root` (this checkout or an extracted tree) on the big manifest, stdout into `out`. */
function inject(root: string, out: string, extra: string[] = []): Promise<Run> {
  const usageFile = join(dir, 'usage.json');
  rmSync(usageFile, { force: true });
  const fd = openSync(out, 'w');
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      USAGE_PROBE,
      join(root, 'bin/meshgate.js'),
      'inject',
      '--config',
      config,
      '--node-state',
      NODE_STATE,
      '-f',
      input,
      ...extra,
    ],
    { stdio: ['ignore', fd, 'pipe'], env: { ...process.env, MESHGATE_USAGE_FILE: usageFile } },
  );
  closeSync(fd);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { maxRssKiB: number; cpuMicros: number };
      resolve({
        code,
        stderr,
        wallSeconds: (performance.now() - started) / 1000,
        cpuSeconds: usage.cpuMicros / 1e6,
        maxRssBytes: usage.maxRssKiB * 1024,
      });
    });
  });
}

/** The output file is the block's output `copies` times, joined by `---`: compared piece by piece. */
function expectOutput(file: string): void {
  const block = Buffer.from(manifest.blockOutput);
  const joined = Buffer.from(`---\n${manifest.blockOutput}`);
  expect(statSync(file).size).toBe(block.length + (manifest.copies - 1) * joined.length);
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(joined.length);
    let at = 0;
    for (let i = 0; i < manifest.copies; i++) {
      const want = i === 0 ? block : joined;
      readSync(fd, buf, 0, want.length, at);
      if (!buf.subarray(0, want.length).equals(want)) expect.fail(`output differs in copy ${i + 1} (byte ${at})`);
      at += want.length;
    }
  } finally {
    closeSync(fd);
  }
}

const figures = (name: string, r: Run) =>
  `${name}: ${r.wallSeconds.toFixed(1)} s wall, ${r.cpuSeconds.toFixed(1)} s CPU, peak RSS ${(r.maxRssBytes / MIB).toFixed(0)} MiB`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshgate-inject-large-'));
  config = join(dir, 'config.yaml');
  writeFileSync(config, stringify(rawConfig('custom')));
  input = join(dir, 'big.yaml');
  manifest = await writeBigManifest(input, 35 * 1000 * 1000, ['--config', config, '--node-state', NODE_STATE]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('meshgate inject on a 35 MB manifest (issue 24)', () => {
  it('streams: the whole output, byte for byte, with progress on stderr, in bounded memory', async () => {
    const out = join(dir, 'out.yaml');
    const r = await inject(REPO, out, ['--progress']);
    const mb = (manifest.bytes / MIB).toFixed(1);
    console.log(`${manifest.documents} documents, ${mb} MiB in; ${figures('this tree', r)}`);
    expect(r.code, r.stderr).toBe(0);
    expectOutput(out);
    // The run takes far over the 2 s after which progress shows: its last line has the final figures.
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(
      new RegExp(
        `^meshgate inject: ${manifest.documents.toLocaleString('en-US')} documents, ${mb} of ${mb} MiB \\(100%\\), [\\d.]+ MiB/s, [\\d.]+ s$`,
      ),
    );
    expect(lines.every((l) => l.startsWith('meshgate inject: '))).toBe(true);
    expect(r.maxRssBytes).toBeLessThan(RSS_LIMIT_BYTES);

    const before = process.env.MESHGATE_INJECT_BEFORE;
    if (!before) return;
    const tree = extractTree(before);
    try {
      const old = await inject(tree.dir, join(dir, 'out-before.yaml'));
      console.log(figures(`before (${tree.ref} = ${tree.commit})`, old));
      expect(old.code, old.stderr).toBe(0);
      expectOutput(join(dir, 'out-before.yaml'));
      expect(old.maxRssBytes).toBeGreaterThan(RSS_LIMIT_BYTES);
    } finally {
      tree.remove();
    }
  }, 900_000);
});
