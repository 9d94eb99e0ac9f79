/**
 * The README's first-run commands cannot rot: `npm start`'s own command line (from package.json) serves the webhook,
 * and the README's curl block runs against it as printed — only the port and the certificate and scratch paths are
 * moved into this test's directory. Each JSON fragment the README shows under a command (`"allowed":true`, the
 * whole refusal message…) must be in that command's output; the patch the README describes must be the patch.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../e2e/harness/binaries.ts';

const README = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const PORT = 18443;

interface Command {
  line: string;
  /** The `# ` lines printed under it, joined. */
  shown: string;
}

/** The sh block of "The two commands" that talks to the server: commands (continuations joined) and what follows. */
function curlBlock(): Command[] {
  const section = README.slice(README.indexOf('## The two commands'));
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('curl'));
  if (!block) throw new Error('README: no sh block with curl under "## The two commands"');
  const out: Command[] = [];
  let pending = '';
  for (const raw of block.split('\n')) {
    if (raw.startsWith('#')) {
      const last = out.at(-1);
      if (last) last.shown += (last.shown ? ' ' : '') + raw.replace(/^#\s*/, '');
      continue;
    }
    if (raw.trim() === '') continue;
    pending += raw.endsWith('\\') ? `${raw.slice(0, -1).trim()} ` : raw.trim();
    if (!raw.endsWith('\\')) {
      out.push({ line: pending, shown: '' });
      pending = '';
    }
  }
  return out;
}

/** `"key":value` fragments of what the README shows (string, true, false), but for those it abbreviates (`...`). */
function fragments(shown: string): string[] {
  return [...shown.matchAll(/"[^"]+":(?:"[^"]*"|true|false)/g)].map((m) => m[0]).filter((f) => !f.includes('...'));
}

describe('the README, as printed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'readme-'));
  let server: ChildProcess;
  let log = '';
  const commands = curlBlock();
  const run = (line: string) => {
    const moved = line
      .replaceAll('https://127.0.0.1:8443', `https://127.0.0.1:${PORT}`)
      .replaceAll('certs/ca.crt', join(dir, 'certs', 'ca.crt'))
      .replaceAll('/tmp/unverified.json', join(dir, 'unverified.json'));
    const r = spawnSync('bash', ['-o', 'pipefail', '-c', moved], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };

  beforeAll(async () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
    const args = pkg.scripts.start.split(' ');
    expect(args.slice(0, 2)).toEqual(['node', 'bin/meshgate.js']);
    const certs = args.indexOf('--write-certs');
    args[certs + 1] = join(dir, 'certs');
    server = spawn(process.execPath, [...args.slice(1), '--port', String(PORT)], { cwd: repoRoot });
    server.stderr?.on('data', (d) => (log += d));
    server.stdout?.on('data', (d) => (log += d));
    for (let i = 0; i < 300; i++) {
      if (run(`curl -sf --cacert certs/ca.crt https://127.0.0.1:8443/readyz`).code === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`npm start's server never became ready:\n${log}`);
  }, 60_000);

  afterAll(() => {
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds the five commands the README walks through', () => {
    expect(commands.map((c) => c.line.split(' ')[0])).toEqual(['curl', 'curl', 'sed', 'curl', 'curl']);
  });

  it('every command succeeds and prints what the README shows under it', () => {
    for (const c of commands) {
      const r = run(c.line);
      expect(r.code, `${c.line}\n${r.err}`).toBe(0);
      for (const f of fragments(c.shown)) expect(r.out, c.line).toContain(f);
    }
  });

  it('the fragments checked include the admission, the refusal and its whole message', () => {
    const all = commands.flatMap((c) => fragments(c.shown));
    expect(all).toContain('"allowed":true');
    expect(all).toContain('"allowed":false');
    expect(all.find((f) => f.startsWith('"message":'))).toMatch(/\[node_unverified\]"$/);
  });

  it('the decoded patch is the one the README describes', () => {
    const decode = commands.find((c) => c.line.includes('base64 -d'));
    expect(decode?.shown).toMatch(/remove \/spec\/initContainers\/0 \(istio-init\), add istio-validation there/);
    const ops = run(decode?.line ?? 'false')
      .out.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { op: string; path: string; value?: { name?: string; securityContext?: unknown } });
    expect(ops[0]).toEqual({ op: 'remove', path: '/spec/initContainers/0' });
    expect(ops.find((o) => o.value?.name === 'istio-validation')).toMatchObject({
      op: 'add',
      path: '/spec/initContainers/0',
      value: { name: 'istio-validation', securityContext: { runAsUser: 1337, capabilities: { drop: ['ALL'] } } },
    });
    const paths = ops.map((o) => o.path);
    expect(paths).toContain('/metadata/annotations/sidecar.istio.io~1status');
    expect(JSON.stringify(ops)).toContain('meshgate.io~1redirect');
    expect(JSON.stringify(ops)).toContain('meshgate.io~1status');
  });

  it('the metrics line counts the decisions just made', () => {
    const metrics = commands.find((c) => c.line.includes('/metrics'));
    const r = run(metrics?.line ?? 'false');
    expect(r.out).toMatch(/^meshgate_admission_decisions_total\{.*decision="patch".*\} [1-9]/m);
  });
});
