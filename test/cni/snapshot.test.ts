/** readSnapshot: what the runtime's readers would see in real directories, without ever throwing or blocking. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CONF_FILE_BYTES } from '../../src/cni/runtime.ts';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import { verifyChain } from '../../src/cni/verify.ts';
import { nodeDirs, type NodeDirs } from './helpers.ts';

let dirs: NodeDirs;
afterEach(() => dirs?.cleanup());

describe('readSnapshot', () => {
  it('a missing conf dir is "no configuration", not an error', async () => {
    dirs = nodeDirs();
    const snap = await readSnapshot(join(dirs.root, 'absent'), [dirs.binDir]);
    expect(snap).toMatchObject({ files: [], dirMissing: true });
    expect(snap.dirError).toBeUndefined();
    expect(
      verifyChain(snap, { runtime: 'containerd', libcni: '1.1', pluginType: 'istio-cni', maxConfNum: 1 }),
    ).toMatchObject({
      reason: 'no_config',
      detail: 'the conf dir does not exist',
    });
  });

  it('a conf dir that is a file is unreadable', async () => {
    dirs = nodeDirs();
    const file = dirs.conf('x.conf', '{}');
    const snap = await readSnapshot(file, [dirs.binDir]);
    expect(snap.dirError).toMatch(/^ENOTDIR/);
    expect(verifyChain(snap, { runtime: 'crio', libcni: '1.1', pluginType: 'istio-cni', maxConfNum: 1 }).reason).toBe(
      'unreadable',
    );
  });

  it('reads only .conf/.conflist/.json entries that are not directories', async () => {
    dirs = nodeDirs();
    dirs.conf('10-a.conflist', '{}');
    dirs.conf('20-b.json', '{}');
    dirs.conf('30-c.conf', '{}');
    dirs.conf('calico-kubeconfig', 'secret');
    dirs.conf('40-d.conflist.bak', '{}');
    mkdirSync(join(dirs.confDir, 'multus.d.conf'));
    const snap = await readSnapshot(dirs.confDir, []);
    expect(snap.files.map((f) => f.name).sort()).toEqual(['10-a.conflist', '20-b.json', '30-c.conf']);
  });

  it('never opens a FIFO, a directory behind a symlink, or an oversized file', async () => {
    dirs = nodeDirs();
    execFileSync('mkfifo', [join(dirs.confDir, '00-fifo.conf')]);
    mkdirSync(join(dirs.root, 'a-dir'));
    symlinkSync(join(dirs.root, 'a-dir'), join(dirs.confDir, '01-dirlink.conf'));
    writeFileSync(join(dirs.confDir, '02-huge.conflist'), ' '.repeat(MAX_CONF_FILE_BYTES + 1));
    const snap = await readSnapshot(dirs.confDir, []);
    const byName = Object.fromEntries(snap.files.map((f) => [f.name, f]));
    expect(byName['00-fifo.conf']).toEqual({ name: '00-fifo.conf', readError: 'not a regular file' });
    expect(byName['01-dirlink.conf'].readError).toMatch(/^EISDIR/);
    expect(byName['02-huge.conflist'].readError).toMatch(/larger than/);
  });

  it('records binaries with their execute bit; first bin dir wins; symlinks followed; missing dirs reported', async () => {
    dirs = nodeDirs();
    dirs.bin('calico');
    dirs.bin('portmap', false);
    symlinkSync(join(dirs.binDir, 'calico'), join(dirs.binDir, 'calico-ipam'));
    symlinkSync(join(dirs.root, 'nowhere'), join(dirs.binDir, 'dangling'));
    mkdirSync(join(dirs.binDir, 'subdir'));
    const second = join(dirs.root, 'bin2');
    dirs.bin('portmap', true, second);
    dirs.bin('istio-cni', true, second);
    const missing = join(dirs.root, 'no-bin');
    const snap = await readSnapshot(dirs.confDir, [dirs.binDir, missing, second]);
    expect(snap.binaries).toEqual({
      calico: { exists: true, executable: true, dir: dirs.binDir },
      'calico-ipam': { exists: true, executable: true, dir: dirs.binDir },
      portmap: { exists: true, executable: false, dir: dirs.binDir },
      'istio-cni': { exists: true, executable: true, dir: second },
    });
    expect(snap.binDirErrors).toEqual({ [missing]: expect.stringMatching(/^ENOENT/) });
  });

  it("reads each conflist's per-network plugin dir (libcni 1.3), inside the conf dir only", async () => {
    dirs = nodeDirs();
    const list = (name: string) => JSON.stringify({ name, plugins: [{ type: 'bridge' }] });
    dirs.conf('10-a.conflist', list('a'));
    dirs.conf('a/10-istio.conf', '{"type":"istio-cni"}');
    dirs.conf('a/20-skip.json', '{"type":"x"}');
    mkdirSync(join(dirs.confDir, 'a', 'sub.conf'));
    dirs.conf('20-b.conflist', list('b'));
    dirs.conf('30-c.conflist', list('c'));
    writeFileSync(join(dirs.confDir, 'c'), 'a file, not a dir');
    dirs.conf('40-up.conflist', list('../up'));
    dirs.conf('50-self.conflist', list(''));
    dirs.conf('60-self.conf', '{"type":"ptp"}');
    dirs.conf('70-nameless.conflist', '{"plugins":[]}');
    dirs.conf('80-x.conf', JSON.stringify({ name: 'not-a-list', type: 'ptp' }));
    const snap = await readSnapshot(dirs.confDir, [dirs.binDir]);
    const byName = Object.fromEntries((snap.pluginDirs ?? []).map((d) => [d.name, d]));
    expect(Object.keys(byName).sort()).toEqual(['', '../up', 'a', 'b', 'c']);
    expect(byName.a).toMatchObject({ path: join(dirs.confDir, 'a'), files: [{ name: '10-istio.conf' }] });
    expect(byName.b).toEqual({ name: 'b', path: join(dirs.confDir, 'b'), missing: true });
    expect(byName.c).toMatchObject({ error: expect.stringMatching(/^ENOTDIR/) });
    expect(byName['../up']).toEqual({ name: '../up', outside: true });
    expect(byName['']).toMatchObject({ path: dirs.confDir, files: [{ name: '60-self.conf' }, { name: '80-x.conf' }] });
  });
});
