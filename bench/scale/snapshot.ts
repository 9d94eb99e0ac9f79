/**
 * Growing the bench's cluster is most of a `--scale` run: on this shared 2-core machine the apiserver takes 55–85
 * pods/s (6–7 ms of its CPU per pod create, the rest of the cores taken by other sessions), so 150,000 pods are
 * ~40 minutes before anything is measured. `--scale-save DIR` keeps etcd's data directory at each measured size
 * (DIR/<nodes>-<pods>, with size.json), and `--scale-from DIR/<nodes>-<pods>` starts the next run's etcd on a copy
 * of it: the same objects, created through the API once, measured again in minutes.
 *
 * The copy is taken between steps, with etcd stopped (SIGSTOP) for the length of a `cp -a` and nothing of the
 * bench writing: a crash-consistent image of the data directory (the WAL and the bbolt file as a power cut would
 * leave them), which etcd opens as it would after a restart.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Size } from './populate.ts';

/** The --data-dir a running etcd was started with (its command line). */
function dataDirOf(pid: number): string {
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const dir = args.findLast((a) => a.startsWith('--data-dir='))?.slice('--data-dir='.length);
  if (!dir) throw new Error(`etcd (pid ${pid}) has no --data-dir`);
  return dir;
}

/** etcd's data directory at `size`, into `root`/<nodes>-<pods>; etcd is stopped meanwhile. Returns the seconds it was. */
export function saveSnapshot(etcdPid: number, root: string, size: Size): { dir: string; frozenS: number } {
  const dir = join(root, `${size.nodes}-${size.pods}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const data = dataDirOf(etcdPid);
  const t0 = performance.now();
  process.kill(etcdPid, 'SIGSTOP');
  try {
    execFileSync('cp', ['-a', data, join(dir)]);
  } finally {
    process.kill(etcdPid, 'SIGCONT');
  }
  const frozenS = (performance.now() - t0) / 1000;
  writeFileSync(join(dir, 'size.json'), `${JSON.stringify({ ...size, savedAt: new Date().toISOString() })}\n`);
  return { dir, frozenS };
}

/** A copy of a saved data directory for etcd to open (on tmpfs, as the bench's etcd runs), and its size. */
export function restoreSnapshot(dir: string): { dataDir: string; size: Size; savedAt: string; remove: () => void } {
  const sizeFile = join(dir, 'size.json');
  if (!existsSync(sizeFile)) throw new Error(`--scale-from ${dir}: no size.json (not a directory --scale-save wrote)`);
  const { nodes, pods, savedAt } = JSON.parse(readFileSync(sizeFile, 'utf8')) as Size & { savedAt: string };
  const work = mkdtempSync(join('/dev/shm', 'meshgate-scale-etcd-'));
  const dataDir = join(work, 'etcd');
  execFileSync('cp', ['-a', dir, dataDir]);
  rmSync(join(dataDir, 'size.json'));
  return { dataDir, size: { nodes, pods }, savedAt, remove: () => rmSync(work, { recursive: true, force: true }) };
}
