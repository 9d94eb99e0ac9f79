/**
 * The command table (src/cli/commands.ts) against the commands themselves, so completion and help cannot drift:
 * every command's --help documents exactly the table's flags and shows an example; every flag of the table gets
 * past the command's own parser. Plus the dispatcher, `version`/`--version`, and the entry shim's quiet EPIPE.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS, type CommandName, type CommandSpec, type FlagView, flagList } from '../../src/cli/commands.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { parseNodeAgentArgs } from '../../src/cli/node-agent.ts';
import { versionInfo } from '../../src/util/version.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'meshgate.js');

async function cli(args: string[]) {
  const io = memoryIO();
  const code = await main(args, io);
  return { code, out: io.out, err: io.err };
}

/** The flags a usage text documents: lines indented by two spaces that start with a flag ("  -n, --namespace NS"). */
function documented(usage: string): { long: Set<string>; short: Map<string, string | undefined> } {
  const long = new Set<string>();
  const short = new Map<string, string | undefined>();
  for (const m of usage.matchAll(/^ {2}(?:-([a-zA-Z])(?:,? |$))?(?:--([a-z][a-z0-9-]*))?/gm)) {
    if (m[2]) long.add(m[2]);
    if (m[1]) short.set(m[1], m[2]);
  }
  return { long, short };
}

const commands = Object.entries(COMMANDS) as Array<[CommandName, CommandSpec]>;

describe('every command', () => {
  it.each(commands.map(([name]) => name))('%s --help: exit 0 and at least one example', async (name) => {
    const r = await cli([name, '--help']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(new RegExp(`\\nexamples?:\\n(  .*\\n)*  .*meshgate ${name}\\b`));
    // `meshgate help NAME` is the same text.
    expect((await cli(['help', name])).out).toBe(r.out);
  });

  it.each(commands.map(([name]) => name))(
    '%s --help documents exactly the flags of the command table',
    async (name) => {
      const { out } = await cli([name, '--help']);
      const flags = flagList(name).filter((f) => f.name !== 'help');
      const doc = documented(out.split(/\nexamples?:\n/)[0]);
      const viaShort = [...doc.short]
        .filter(([, long]) => !long)
        .map(([s]) => flags.find((f) => f.short === s)?.name ?? `-${s}`);
      expect(new Set([...doc.long, ...viaShort])).toEqual(new Set(flags.map((f) => f.name)));
      for (const [s, long] of doc.short) if (long) expect(flags.find((f) => f.name === long)?.short).toBe(s);
    },
  );

  // The table is the parser's declaration, defaults included: where a usage line states a default of a flag the
  // table gives one, it is the table's (flags without one, like serve's limits, take theirs where they are checked).
  it('every default a usage text states is the one the command parses with', async () => {
    let stated = 0;
    for (const [name] of commands) {
      const { out } = await cli([name, '--help']);
      for (const f of flagList(name)) {
        const line = out.split('\n').find((l) => new RegExp(`^ {2}(-\\w, )?--${f.name}\\b`).test(l));
        const said = line && /\(default:? ([^)\s,;]+)\)/.exec(line)?.[1];
        if (f.default === undefined || !said || !/^[\w./:-]+$/.test(said)) continue;
        stated++;
        expect(String(f.default), `${name} --${f.name}: usage says (default ${said})`).toBe(said);
      }
    }
    expect(stated).toBeGreaterThan(10);
  });

  /** The arguments that pass one flag with a value its parser takes as a value (not necessarily a valid one). */
  const argsFor = (f: FlagView) =>
    f.value ? [`--${f.name}`, Array.isArray(f.value) ? f.value[0] : 'x'] : [`--${f.name}`];

  it.each(commands.map(([name]) => name).filter((n) => n !== 'node-agent'))(
    '%s: its parser takes every flag of the table (and refuses others)',
    async (name) => {
      for (const f of flagList(name)) {
        const r = await cli([name, ...argsFor(f), '--help']);
        expect(r.err, `${name} --${f.name}`).not.toMatch(/Unknown option/);
        expect(r.code, `${name} --${f.name}`).toBe(0);
      }
      // The probe can fail: a flag the command does not have is refused before --help is honoured.
      const unknown = await cli([name, '--not-a-meshgate-flag', '--help']);
      expect(unknown.code).not.toBe(0);
    },
  );

  it('node-agent (which answers --help before parsing): its parser takes every flag of the table (and refuses others)', () => {
    const required = ['--plugin-type', 'istio-cni', '--node-name', 'n', '--kubeconfig', 'kc'];
    const problem = (args: string[]) => {
      try {
        parseNodeAgentArgs([...required, ...args], {});
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    for (const f of flagList('node-agent')) expect(problem(argsFor(f)), `--${f.name}`).not.toMatch(/Unknown option/);
    expect(problem(['--not-a-meshgate-flag'])).toMatch(/Unknown option '--not-a-meshgate-flag'/);
  });
});

describe('the dispatcher', () => {
  it('lists every command; no command is a usage error (stderr, exit 2); an unknown one too', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const [name, c] of commands) expect(help.out).toContain(`  ${name.padEnd(17)}  ${c.summary}\n`);
    expect(help.out).toMatch(/\nexamples:\n {2}meshgate check /);
    expect(await cli([])).toMatchObject({ code: 2, out: '', err: help.out });
    expect(await cli(['frobnicate'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^meshgate: unknown command "frobnicate"/),
    });
    expect(await cli(['toString'])).toMatchObject({ code: 2 });
  });
});

describe('version', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const dir = mkdtempSync(join(tmpdir(), 'meshgate-version-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("meshgate --version: one line with package.json's version and the Node.js version", async () => {
    const r = await cli(['--version']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      new RegExp(
        `^meshgate ${pkg.version.replace(/\./g, '\\.')} \\((commit [0-9a-f]{12}, )?node ${process.version}, ${process.platform}/${process.arch}\\)\\n$`,
      ),
    );
  });

  it('meshgate version -o json: the same facts for machines', async () => {
    const r = await cli(['version', '-o', 'json']);
    expect(JSON.parse(r.out)).toMatchObject({ version: pkg.version, node: process.version });
    expect((await cli(['version', '-o', 'yaml'])).code).toBe(2);
  });

  it("reads the commit from build-info.json, else from a checkout's .git files (never by running git)", () => {
    const root = (name: string, files: Record<string, string>) => {
      const r = join(dir, name);
      for (const [path, text] of Object.entries({ 'package.json': '{"version":"9.8.7"}', ...files })) {
        mkdirSync(join(r, path, '..'), { recursive: true });
        writeFileSync(join(r, path), text);
      }
      return r;
    };
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    expect(versionInfo(root('built', { 'build-info.json': `{"commit":"${a}"}`, '.git/HEAD': `${b}\n` }))).toMatchObject(
      { version: '9.8.7', commit: a, commitSource: 'build-info.json' },
    );
    expect(versionInfo(root('detached', { '.git/HEAD': `${b}\n` }))).toMatchObject({
      commit: b,
      commitSource: 'git checkout',
    });
    expect(
      versionInfo(root('branch', { '.git/HEAD': 'ref: refs/heads/main\n', '.git/refs/heads/main': `${a}\n` })).commit,
    ).toBe(a);
    expect(
      versionInfo(
        root('packed', {
          '.git/HEAD': 'ref: refs/heads/main\n',
          '.git/packed-refs': `# pack-refs\n${b} refs/heads/main\n`,
        }),
      ).commit,
    ).toBe(b);
    // No commit, chart or image: only what the process itself says (its flags, as vitest started this worker).
    const flags = [
      ...process.execArgv,
      ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((f) => f.startsWith('-')),
    ];
    expect(versionInfo(root('bare', {}))).toEqual({
      version: '9.8.7',
      node: process.version,
      ...(flags.length > 0 ? { nodeFlags: flags } : {}),
      platform: `${process.platform}/${process.arch}`,
    });
    expect(versionInfo(root('garbage', { 'build-info.json': '{"commit":"$(rm -rf /)"}' })).commit).toBeUndefined();
  });
});

describe('bin/meshgate.js when the reader of its output goes away (meshgate … | head)', () => {
  /** Runs the real binary with its stdout pipe already closed: the first write fails with EPIPE. */
  const closedPipe = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stderr }));
    });

  it("ends quietly with the command's own exit code, no trace", async () => {
    const help = await closedPipe(['check', '--help']);
    expect(help).toEqual({ code: 0, stderr: '' });
    // check-node's verdict "not verified" is exit 1, and stays so.
    const verdict = await closedPipe([
      'check-node',
      '--plugin-type',
      'istio-cni',
      '--cni-conf-dir',
      join(ROOT, 'test'),
    ]);
    expect(verdict).toEqual({ code: 1, stderr: '' });
  });
});
