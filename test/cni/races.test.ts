/**
 * The races of PROBLEM.md laid out in real directories (real files, fake plugin binaries with real mode bits),
 * read with readSnapshot and judged with verifyChain, for containerd and CRI-O.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CniReasonCode } from '../../src/cni/reasons.ts';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import { verifyChain } from '../../src/cni/verify.ts';
import { nodeDirs, type NodeDirs } from './helpers.ts';

const MESHED = 'corpus:istio__10-calico.conflist-istioconfig'; // calico → portmap → istio-cni
const PRIMARY = 'corpus:istio__calico.conflist'; // calico → portmap
const CHAIN_BINS = ['calico', 'portmap', 'istio-cni'];

interface Race {
  name: string;
  files: Record<string, string>;
  bins?: string[];
  /** Plugins whose binary exists without execute permission. */
  nonExec?: string[];
  maxConfNum?: number;
  containerd: { reason: CniReasonCode; file?: string };
  crio: { reason: CniReasonCode; file?: string };
}

// prettier-ignore
const RACES: Race[] = [
  {
    name: 'boot: primary written, mesh plugin not yet added',
    files: { '10-calico.conflist': PRIMARY },
    containerd: { reason: 'mesh_plugin_missing', file: '10-calico.conflist' },
    crio: { reason: 'mesh_plugin_missing', file: '10-calico.conflist' },
  },
  {
    name: 'installed: mesh plugin chained in the primary file',
    files: { '10-calico.conflist': MESHED },
    containerd: { reason: 'verified', file: '10-calico.conflist' },
    crio: { reason: 'verified', file: '10-calico.conflist' },
  },
  {
    name: 'priority: 00-multus.conf sorts before the edited file',
    files: { '00-multus.conf': 'corpus:multus__00-multus.conf', '10-calico.conflist': MESHED },
    bins: [...CHAIN_BINS, 'multus'],
    containerd: { reason: 'mesh_plugin_missing', file: '00-multus.conf' },
    crio: { reason: 'mesh_plugin_missing', file: '00-multus.conf' },
  },
  {
    name: 'priority: 00-multus.conf without its binary',
    files: { '00-multus.conf': 'corpus:multus__00-multus.conf', '10-calico.conflist': MESHED },
    containerd: { reason: 'mesh_plugin_missing', file: '00-multus.conf' },
    crio: { reason: 'verified', file: '10-calico.conflist' },
  },
  {
    name: 'priority: a mesh 01-…conf (standalone plugin) before 10-calico.conflist',
    files: { '01-istio-cni.conf': 'corpus:istio__istio-cni.conf', '10-calico.conflist': MESHED },
    containerd: { reason: 'mesh_plugin_not_chained', file: '01-istio-cni.conf' },
    crio: { reason: 'mesh_plugin_not_chained', file: '01-istio-cni.conf' },
  },
  {
    name: 'priority: istio-owned 02-istio-cni.conflist before the primary',
    files: { '02-istio-cni.conflist': 'corpus:istio__istio-owned.conflist.golden', '10-calico.conflist': PRIMARY },
    bins: [...CHAIN_BINS, 'bridge', 'tuning'],
    containerd: { reason: 'verified', file: '02-istio-cni.conflist' },
    crio: { reason: 'verified', file: '02-istio-cni.conflist' },
  },
  {
    name: 'a non-JSON file sorts first',
    files: { '00-broken.conf': 'corpus:istio__non_json.conf', '10-calico.conflist': MESHED },
    containerd: { reason: 'unparsable_first_file', file: '00-broken.conf' },
    crio: { reason: 'verified', file: '10-calico.conflist' },
  },
  {
    name: 'an unrendered Calico template sorts first',
    files: { '05-calico.conflist': 'corpus:calico__10-calico.conflist.template', '10-calico.conflist': MESHED },
    containerd: { reason: 'unparsable_first_file', file: '05-calico.conflist' },
    crio: { reason: 'verified', file: '10-calico.conflist' },
  },
  {
    name: 'overwrite: primary rewritten without the mesh plugin',
    files: { '10-aws.conflist': PRIMARY },
    containerd: { reason: 'mesh_plugin_missing' },
    crio: { reason: 'mesh_plugin_missing' },
  },
  {
    name: 'mesh plugin binary not installed yet',
    files: { '10-calico.conflist': MESHED },
    bins: ['calico', 'portmap'],
    containerd: { reason: 'binary_missing', file: '10-calico.conflist' },
    crio: { reason: 'no_valid_config' },
  },
  {
    name: 'mesh plugin binary not installed, primary-only file sorts later',
    files: { '10-calico.conflist': MESHED, '20-calico.conflist': PRIMARY },
    bins: ['calico', 'portmap'],
    containerd: { reason: 'binary_missing', file: '10-calico.conflist' },
    crio: { reason: 'mesh_plugin_missing', file: '20-calico.conflist' },
  },
  {
    name: 'mesh plugin binary not executable',
    files: { '10-calico.conflist': MESHED },
    bins: ['calico', 'portmap'],
    nonExec: ['istio-cni'],
    containerd: { reason: 'binary_not_executable', file: '10-calico.conflist' },
    crio: { reason: 'no_valid_config' },
  },
  {
    name: 'max_conf_num 2: both files must load',
    files: { '10-calico.conflist': MESHED, '20-broken.conf': 'corpus:istio__non_json.conf' },
    maxConfNum: 2,
    containerd: { reason: 'unparsable_first_file', file: '20-broken.conf' },
    crio: { reason: 'verified', file: '10-calico.conflist' },
  },
  {
    name: 'max_conf_num 1: a broken second file is never read',
    files: { '10-calico.conflist': MESHED, '20-broken.conf': 'corpus:istio__non_json.conf' },
    containerd: { reason: 'verified', file: '10-calico.conflist' },
    crio: { reason: 'verified', file: '10-calico.conflist' },
  },
  {
    name: 'names sort by bytes: upper case before lower case, "10-" before "9-"',
    files: { '9-calico.conflist': PRIMARY, 'Z.conflist': PRIMARY, '10-calico.conflist': MESHED },
    containerd: { reason: 'verified', file: '10-calico.conflist' },
    crio: { reason: 'verified', file: '10-calico.conflist' },
  },
  {
    name: 'other extensions and sub-directories are ignored',
    files: { '00-calico.conflist.bak': PRIMARY, 'calico-kubeconfig': 'apiVersion: v1', '10-calico.conflist': MESHED },
    containerd: { reason: 'verified', file: '10-calico.conflist' },
    crio: { reason: 'verified', file: '10-calico.conflist' },
  },
  { name: 'empty conf dir', files: {}, containerd: { reason: 'no_config' }, crio: { reason: 'no_config' } },
];

let dirs: NodeDirs | undefined;
afterEach(() => {
  dirs?.cleanup();
  dirs = undefined;
});

async function judge(race: Race, runtime: 'containerd' | 'crio') {
  dirs = nodeDirs();
  for (const [name, content] of Object.entries(race.files)) dirs.conf(name, content);
  mkdirSync(join(dirs.confDir, 'multus.d'));
  for (const b of race.bins ?? CHAIN_BINS) dirs.bin(b);
  for (const b of race.nonExec ?? []) dirs.bin(b, false);
  const snapshot = await readSnapshot(dirs.confDir, [dirs.binDir]);
  return verifyChain(snapshot, { runtime, libcni: '1.1', pluginType: 'istio-cni', maxConfNum: race.maxConfNum ?? 1 });
}

describe('races in real directories', () => {
  it.each(
    RACES.flatMap((r) => (['containerd', 'crio'] as const).map((runtime) => ({ race: r, runtime, title: r.name }))),
  )('$title ($runtime)', async ({ race, runtime }) => {
    const v = await judge(race, runtime);
    expect({ reason: v.reason, file: v.evidence.file }).toMatchObject(race[runtime]);
    expect(v.verified).toBe(race[runtime].reason === 'verified');
  });

  it('CRI-O lists every candidate and why it was skipped', async () => {
    const v = await judge(
      {
        name: '',
        files: {
          '00-broken.conf': 'corpus:istio__non_json.conf',
          '05-multus.conf': 'corpus:multus__00-multus.conf',
          '10-calico.conflist': MESHED,
          '20-x.conflist': PRIMARY,
        },
        containerd: { reason: 'unparsable_first_file' },
        crio: { reason: 'verified' },
      },
      'crio',
    );
    expect(v.evidence.candidates.map((c) => [c.file, c.outcome])).toEqual([
      ['00-broken.conf', 'unparsable'],
      ['05-multus.conf', 'binary_missing'],
      ['10-calico.conflist', 'selected'],
      ['20-x.conflist', 'not_considered'],
    ]);
    expect(v.evidence.candidates[1].detail).toMatch(/no binary multus in /);
  });

  it('containerd says which files it did not consider', async () => {
    const v = await judge(
      {
        name: '',
        files: { '10-calico.conflist': MESHED, '20-x.conflist': PRIMARY },
        containerd: { reason: 'verified' },
        crio: { reason: 'verified' },
      },
      'containerd',
    );
    expect(v.evidence.candidates).toEqual([
      { file: '10-calico.conflist', outcome: 'selected' },
      { file: '20-x.conflist', outcome: 'not_considered', detail: 'beyond max_conf_num 1' },
    ]);
  });

  it('the first bin dir holding a plugin wins, even when it is not executable (FindInPath)', async () => {
    dirs = nodeDirs();
    dirs.conf('10-calico.conflist', MESHED);
    const second = join(dirs.root, 'bin2');
    for (const b of CHAIN_BINS) dirs.bin(b, true, second);
    dirs.bin('istio-cni', false);
    const snap = await readSnapshot(dirs.confDir, [dirs.binDir, second]);
    const opts = { pluginType: 'istio-cni', libcni: '1.1' as const, maxConfNum: 1 };
    expect(verifyChain(snap, { ...opts, runtime: 'containerd' }).reason).toBe('binary_not_executable');
    const swapped = await readSnapshot(dirs.confDir, [second, dirs.binDir]);
    expect(verifyChain(swapped, { ...opts, runtime: 'containerd' }).reason).toBe('verified');
  });

  it('an unreadable first file (dangling symlink) is an error for containerd and skipped by CRI-O', async () => {
    dirs = nodeDirs();
    symlinkSync(join(dirs.root, 'nowhere.conflist'), join(dirs.confDir, '00-gone.conflist'));
    dirs.conf('10-calico.conflist', MESHED);
    for (const b of CHAIN_BINS) dirs.bin(b);
    const snap = await readSnapshot(dirs.confDir, [dirs.binDir]);
    const c = verifyChain(snap, { runtime: 'containerd', libcni: '1.1', pluginType: 'istio-cni', maxConfNum: 1 });
    expect(c).toMatchObject({ reason: 'unreadable', detail: expect.stringMatching(/^ENOENT/) });
    const o = verifyChain(snap, { runtime: 'crio', libcni: '1.1', pluginType: 'istio-cni', maxConfNum: 1 });
    expect(o.reason).toBe('verified');
    expect(o.evidence.candidates[0]).toMatchObject({ file: '00-gone.conflist', outcome: 'unreadable' });
  });

  it('the selected file changes sha256 when it is rewritten', async () => {
    dirs = nodeDirs();
    const path = dirs.conf('10-calico.conflist', MESHED);
    for (const b of CHAIN_BINS) dirs.bin(b);
    const opts = { runtime: 'containerd' as const, libcni: '1.1' as const, pluginType: 'istio-cni', maxConfNum: 1 };
    const before = verifyChain(await readSnapshot(dirs.confDir, [dirs.binDir]), opts);
    unlinkSync(path);
    const rewritten = dirs.conf('10-calico.conflist', 'corpus:istio__list.conflist.golden');
    for (const b of ['bridge', 'tuning']) dirs.bin(b);
    const after = verifyChain(await readSnapshot(dirs.confDir, [dirs.binDir]), opts);
    expect(before.verified && after.verified).toBe(true);
    expect(after.evidence.sha256).toBe(createHash('sha256').update(readFileSync(rewritten)).digest('hex'));
    expect(after.evidence.sha256).not.toBe(before.evidence.sha256);
  });
});
