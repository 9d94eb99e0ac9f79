/**
 * `meshgate check-node` exit codes as a node's scripts see them, through the real CLI entry (spawned with the
 * repo's Node 24): 0 verified, 1 not verified, 2 usage / I/O / internal error. A file nested deeper than Go
 * allows used to overflow meshgate's stack and exit 1 with a trace (1 means "not verified", a lie there).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkNodeCommand } from '../../src/cli/check-node.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { nodeDirs, type NodeDirs } from './helpers.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
let dirs: NodeDirs;
afterEach(() => dirs?.cleanup());

const MESHED = (extra = '') =>
  `{"cniVersion":"0.4.0","name":"k8s","plugins":[{"type":"bridge"${extra}},{"type":"istio-cni"}]}`;
const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

function checkNode(files: Record<string, string>, ...extra: string[]) {
  dirs = nodeDirs();
  for (const [name, content] of Object.entries(files)) dirs.conf(name, content);
  for (const b of ['bridge', 'istio-cni']) dirs.bin(b);
  const args = [
    'bin/meshgate.js',
    'check-node',
    '--cni-conf-dir',
    dirs.confDir,
    '--cni-bin-dir',
    dirs.binDir,
    '--plugin-type',
    'istio-cni',
    ...extra,
  ];
  const res = spawnSync(join(repo, 'node_modules/.bin/node'), args, { cwd: repo, encoding: 'utf8', timeout: 60_000 });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

describe('check-node exit codes (spawned CLI)', () => {
  it('0 when verified', () => {
    const r = checkNode({ '10-k8s.conflist': MESHED() });
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toContain('VERIFIED (verified)');
  });

  it('1 when not verified', () => {
    const r = checkNode({ '10-k8s.conflist': '{"name":"k8s","plugins":[{"type":"bridge"}]}' });
    expect(r).toMatchObject({ code: 1, err: '' });
    expect(r.out).toContain('NOT VERIFIED (mesh_plugin_missing)');
  });

  it('0 for a valid file nested 9990 deep (placeholder scan without recursion)', () => {
    const r = checkNode({ '10-k8s.conflist': MESHED(`,"x":${nested(9990)}`) }, '--output', 'json');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(r.out).evidence.plugins).toEqual(['bridge', 'istio-cni']);
  });

  it.each([10_001, 1_000_000])("1 with Go's reason for a file nested %i deep, no stack trace", (depth) => {
    const r = checkNode({ '10-k8s.conflist': MESHED(`,"x":${nested(depth)}`) });
    expect(r.err).toBe('');
    expect(r.code).toBe(1);
    expect(r.out).toContain('NOT VERIFIED (unparsable_first_file)');
    expect(r.out).toContain("invalid character '[' exceeded max depth");
  });

  it('2 on a usage error', () => {
    const r = checkNode({}, '--runtime', 'docker');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--runtime must be one of/);
  });

  it('2 when the conf dir cannot be read', () => {
    dirs = nodeDirs();
    const file = dirs.bin('bridge');
    const res = spawnSync(
      join(repo, 'node_modules/.bin/node'),
      ['bin/meshgate.js', 'check-node', '--cni-conf-dir', file, '--plugin-type', 'istio-cni'],
      { cwd: repo, encoding: 'utf8' },
    );
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/cannot read .*ENOTDIR/);
  });
});

describe('check-node turns an unexpected exception into exit 2', () => {
  it('reports it in one line (here: writing the output fails)', async () => {
    dirs = nodeDirs();
    dirs.conf('10-k8s.conflist', MESHED());
    const io = memoryIO();
    io.stdout = () => {
      throw new Error('EPIPE: broken pipe, write\n    at a stack frame');
    };
    const code = await checkNodeCommand(
      ['--cni-conf-dir', dirs.confDir, '--cni-bin-dir', dirs.binDir, '--plugin-type', 'istio-cni'],
      io,
    );
    expect(code).toBe(2);
    expect(io.err).toBe('meshgate check-node: internal error: Error: EPIPE: broken pipe, write\n');
  });
});
