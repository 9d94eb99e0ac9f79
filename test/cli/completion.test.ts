/**
 * `meshgate completion bash|zsh|fish`, run by the real shells: bash through its completion function exactly as
 * `complete -F` calls it (COMP_WORDS/COMP_CWORD) and `complete -p`; zsh at an interactive prompt in a
 * pseudo-terminal (zsh-capture.zsh); fish with `complete -C`. Every command and every flag of the command table
 * must complete, and flag values must complete to files, directories or the flag's words.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS, type CommandName, flagList } from '../../src/cli/commands.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';

const dir = mkdtempSync(join(tmpdir(), 'meshgate-completion-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'confdir'));
writeFileSync(join(dir, 'config.yaml'), 'mesh: istio\n');

async function script(shell: string): Promise<string> {
  const io = memoryIO();
  expect(await main(['completion', shell], io)).toBe(0);
  const file = join(dir, `meshgate.${shell}`);
  writeFileSync(file, io.out);
  return file;
}

const commands = Object.keys(COMMANDS) as CommandName[];
const longFlags = (cmd: CommandName) => flagList(cmd).map((f) => `--${f.name}`);

describe('bash', () => {
  /** Completes each line (words; the last is the one being completed) as bash's programmable completion would. */
  async function bash(lines: string[][]): Promise<string[][]> {
    const file = await script('bash');
    const calls = lines.map((words) => `t ${words.map((w) => `'${w}'`).join(' ')}`).join('\n');
    const out = execFileSync(
      'bash',
      [
        '--norc',
        '--noprofile',
        '-c',
        `cd '${dir}'
source '${file}'
complete -p meshgate
t() { COMP_WORDS=("$@"); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _meshgate; echo "\${COMPREPLY[*]}"; }
${calls}`,
      ],
      { encoding: 'utf8' },
    );
    const [registration, ...results] = out.split('\n');
    expect(registration).toBe('complete -F _meshgate meshgate');
    return results.slice(0, lines.length).map((l) => l.split(' ').filter(Boolean));
  }

  it("registers with complete -F and completes every command, every command's flags, and flag values", async () => {
    const lines = [
      ['meshgate', ''],
      ['meshgate', 'ch'],
      ...commands.map((c) => ['meshgate', c, '--']),
      ['meshgate', 'check', '--mesh', ''],
      ['meshgate', 'check', '--mesh', '=', 'li'],
      ['meshgate', 'check', '-o', ''],
      ['meshgate', 'check', '--config', 'con'],
      ['meshgate', 'check-node', '--cni-conf-dir', 'con'],
      ['meshgate', 'completion', ''],
      ['meshgate', 'help', 'ex'],
      ['meshgate', 'check', '--namespace', ''],
    ];
    const got = await bash(lines);
    const at = (i: number) => got[i];
    expect(at(0)).toEqual([...commands, 'help', '--help', '--version']);
    expect(at(1)).toEqual(['check', 'check-node']);
    for (const [i, c] of commands.entries()) expect(at(2 + i)).toEqual(longFlags(c));
    const n = 2 + commands.length;
    expect(at(n)).toEqual(['istio', 'linkerd', 'custom']);
    expect(at(n + 1)).toEqual(['linkerd']);
    expect(at(n + 2)).toEqual(['table', 'json']);
    expect(at(n + 3).sort()).toEqual(['confdir', 'config.yaml']);
    expect(at(n + 4)).toEqual(['confdir']);
    expect(at(n + 5)).toEqual(['--help', '-h', 'bash', 'zsh', 'fish']);
    expect(at(n + 6)).toEqual(['explain']);
    expect(at(n + 7)).toEqual([]);
  });
});

describe('zsh', () => {
  const capture = join(import.meta.dirname, 'zsh-capture.zsh');
  const zsh = async (line: string) => {
    const out = execFileSync('zsh', ['-f', capture, await script('zsh'), line], {
      encoding: 'utf8',
      cwd: dir,
      timeout: 20_000,
    });
    return out.split('\n').filter(Boolean);
  };

  it("completes commands, a command's flags, and flag values at an interactive prompt", async () => {
    expect(await zsh('meshgate ch')).toEqual(['check', 'check-node']);
    expect(await zsh('meshgate ')).toEqual(expect.arrayContaining(commands));
    expect((await zsh('meshgate check --')).sort()).toEqual(longFlags('check').sort());
    expect(await zsh('meshgate check --mesh ')).toEqual(['istio', 'linkerd', 'custom']);
    expect(await zsh('meshgate repair-controller --leader-elect ')).toEqual(['true', 'false']);
    expect(await zsh('meshgate completion ')).toEqual(['bash', 'zsh', 'fish']);
    expect(await zsh('meshgate check --config con')).toEqual(expect.arrayContaining(['config.yaml']));
  });
});

describe('fish', () => {
  const fish = async (line: string) => {
    const out = execFileSync('fish', ['--no-config', '-c', `source '${await script('fish')}'; complete -C '${line}'`], {
      encoding: 'utf8',
      cwd: dir,
    });
    return out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]);
  };

  it("completes every command and every command's flags", async () => {
    expect(await fish('meshgate ')).toEqual(expect.arrayContaining(commands));
    for (const c of commands) expect((await fish(`meshgate ${c} --`)).sort()).toEqual(longFlags(c).sort());
  });

  it('completes flag values: words, files, directories', async () => {
    expect((await fish('meshgate check --mesh ')).sort()).toEqual(['custom', 'istio', 'linkerd']);
    expect((await fish('meshgate check -o ')).sort()).toEqual(['json', 'table']);
    expect(await fish('meshgate check --config con')).toEqual(expect.arrayContaining(['config.yaml']));
    expect(await fish('meshgate check-node --cni-conf-dir con')).toEqual(['confdir/']);
    expect((await fish('meshgate completion ')).sort()).toEqual(['bash', 'fish', 'zsh']);
  });
});

describe('meshgate completion itself', () => {
  it('needs exactly one known shell (exit 2 otherwise)', async () => {
    for (const args of [[], ['tcsh'], ['bash', 'zsh']]) {
      const io = memoryIO();
      expect(await main(['completion', ...args], io)).toBe(2);
      expect(io.out).toBe('');
      expect(io.err).toMatch(/^meshgate completion: (which shell\?|unknown shell "tcsh"|one shell, not bash zsh)/);
    }
  });
});
