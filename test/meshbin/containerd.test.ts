/**
 * containerd 2.x as scripts/build-containerd.sh built it (CGO_ENABLED=0): the version, the CRI plugin's `cni`
 * section in its default config (what meshgate's CNI emulation reads), and a real start with the CRI plugin loaded.
 * The daemon runs in its own network namespace (`unshare --net`, only lo up) on a socket in a temporary dir, so
 * nothing it does can reach the machine's networks or its Debian containerd.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findMeshBuild } from './binaries.ts';

const ctd = findMeshBuild('containerd');
const run = (bin: string, args: string[]) => spawnSync(bin, args, { encoding: 'utf8', timeout: 20_000 });
const version = String(ctd.manifest.containerdVersion);

describe('containerd (scripts/build-containerd.sh)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'meshgate-containerd-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('containerd, ctr and the runc shim report the pinned 2.x release', () => {
    expect(version).toMatch(/^v2\.\d+\.\d+$/);
    const daemon = run(ctd.bin('containerd'), ['--version']);
    expect(daemon.status, daemon.stderr).toBe(0);
    expect(daemon.stdout).toContain(`containerd github.com/containerd/containerd/v2 ${version}`);
    expect(run(ctd.bin('ctr'), ['--version']).stdout).toContain(version);
    expect(run(ctd.bin('containerd-shim-runc-v2'), ['-v']).stdout).toMatch(new RegExp(`Version:\\s+${version}`));
  });

  it("`config default` has the CRI runtime plugin's cni section with conf_dir and max_conf_num", () => {
    const res = run(ctd.bin('containerd'), ['config', 'default']);
    expect(res.status, res.stderr).toBe(0);
    const cni = /\[plugins\.'io\.containerd\.cri\.v1\.runtime'\.cni\]\n((?:[ \t]+\S.*\n)+)/.exec(res.stdout)?.[1];
    expect(cni, res.stdout).toBeDefined();
    expect(cni).toMatch(/conf_dir = '\/etc\/cni\/net\.d'/);
    expect(cni).toMatch(/max_conf_num = 1/);
    expect(cni).toMatch(/bin_dirs = \['\/opt\/cni\/bin'\]/);
    console.info(`containerd ${version} config default: ${res.stdout.split('\n')[0]}; cni section:\n${cni}`);
  });

  it('starts with a temporary root and socket and serves ctr, the CRI plugin loaded', async () => {
    const sock = join(tmp, 'containerd.sock');
    writeFileSync(
      join(tmp, 'config.toml'),
      [
        'version = 3',
        `root = '${tmp}/root'`,
        `state = '${tmp}/state'`,
        '[grpc]',
        `  address = '${sock}'`,
        "[plugins.'io.containerd.cri.v1.runtime'.cni]",
        `  bin_dirs = ['${tmp}/cni-bin']`,
        `  conf_dir = '${tmp}/net.d'`,
        '  max_conf_num = 1',
      ].join('\n'),
    );
    const daemon = spawn(
      'unshare',
      [
        '--net',
        'sh',
        '-c',
        `ip link set lo up && exec "$0" --config "$1"`,
        ctd.bin('containerd'),
        join(tmp, 'config.toml'),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    daemon.stderr.on('data', (d: Buffer) => {
      log += d.toString();
    });
    const exited = new Promise<void>((resolve) => daemon.on('exit', () => resolve()));
    try {
      for (let i = 0; i < 150 && !existsSync(sock) && daemon.exitCode === null; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(existsSync(sock), `no socket; containerd said:\n${log}`).toBe(true);
      const server = run(ctd.bin('ctr'), ['-a', sock, 'version']);
      expect(server.status, server.stderr).toBe(0);
      expect(server.stdout).toMatch(new RegExp(`Server:\\n\\s+Version:\\s+${version}`));
      const plugins = run(ctd.bin('ctr'), ['-a', sock, 'plugins', 'ls']).stdout;
      expect(plugins).toMatch(/io\.containerd\.grpc\.v1\s+cri\s+-\s+ok/);
      expect(plugins).toMatch(/io\.containerd\.snapshotter\.v1\s+overlayfs\s+\S+\s+ok/);
    } finally {
      daemon.kill('SIGTERM');
      await exited;
    }
  });
});
