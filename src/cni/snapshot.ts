/**
 * The only I/O of CNI verification: reads the conf dir and bin dir(s) into a `Snapshot` that `verifyChain`
 * judges. Mirrors what the runtime's readers see (libcni `ConfFiles`, `os.ReadFile`, invoke `FindInPath`):
 *
 * - conf dir: entries that are not directories (as `os.ReadDir` reports them: a symlink counts as a file) and whose
 *   extension is `.conf`/`.conflist`/`.json`. Each is stat'ed through symlinks and read (as bytes: Go decodes
 *   bytes, src/cni/gojson.ts does too) only when it is a regular file of at most 2 MiB, meshgate's own memory
 *   bound (the runtimes read any size: such a file is `oversize` and judged fail-closed by src/cni/runtime.ts); a
 *   FIFO is never opened, because reading one would block (as it would block containerd). A missing dir is
 *   `dirMissing`, any other listing error `dirError`; neither throws.
 * - bin dirs: every regular file (through symlinks), the first dir holding a name winning, with whether any
 *   execute bit is set. Unlistable bin dirs are recorded in `binDirErrors`.
 * - plugin dirs (libcni ≥ 1.3, `NetworkPluginConfsFromFiles`): for every `.conflist` whose `name` is a string,
 *   `<confdir>/<name>` as Go's filepath.Join makes it (cleaned: "" and "." are the conf dir itself); its `.conf`
 *   entries that are not directories, read like the conf dir's files. A name leading outside the conf dir is not
 *   followed (`outside`): the node agent sees only its mount of the conf dir.
 * - Cilium's renamed files: conf dir entries named `<conf file>.cilium_bak`, read like conf files
 *   (src/cni/cilium.ts says why).
 * - extra dirs (--multus-dir: Multus' confDir, the dir of its clusterNetwork file): read like the conf dir,
 *   plugin dirs included, into `extraDirs` (src/cni/multus.ts follows Multus through them).
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { renamedFrom } from './cilium.ts';
import { conflistName } from './parse.ts';
import { isConfFileName, MAX_CONF_FILE_BYTES } from './runtime.ts';
import type { BinaryInfo, ConfFileEntry, NetDir, PluginDir, Snapshot } from './types.ts';

export async function readSnapshot(
  confDir: string,
  binDirs: readonly string[],
  extraDirs: readonly string[] = [],
): Promise<Snapshot> {
  const [conf, bins, extra] = await Promise.all([
    readConfDir(confDir),
    readBinDirs(binDirs),
    Promise.all(extraDirs.map((dir) => readNetDir(dir))),
  ]);
  const pluginDirs = await readPluginDirs(confDir, conf.files);
  return {
    confDir,
    binDirs: [...binDirs],
    ...conf,
    ...bins,
    ...(pluginDirs.length > 0 ? { pluginDirs } : {}),
    ...(extra.length > 0 ? { extraDirs: extra } : {}),
  };
}

/** The per-network plugin dirs of a dir's conflists (libcni 1.3). */
async function readPluginDirs(dir: string, files: readonly ConfFileEntry[]): Promise<PluginDir[]> {
  const names = new Set<string>();
  for (const f of files) {
    const name = f.name.endsWith('.conflist') && f.content ? conflistName(f.content) : undefined;
    if (name !== undefined) names.add(name);
  }
  return Promise.all([...names].map((name) => readPluginDir(dir, name)));
}

/** One of Multus' dirs, read like the conf dir. */
async function readNetDir(path: string): Promise<NetDir> {
  const read = await readConfDir(path);
  const pluginDirs = await readPluginDirs(path, read.files);
  return {
    path,
    files: read.files,
    ...(read.dirMissing ? { missing: true } : {}),
    ...(read.dirError ? { error: read.dirError } : {}),
    ...(pluginDirs.length > 0 ? { pluginDirs } : {}),
  };
}

/** `<confDir>/<name>` and its `.conf` files, as libcni 1.3 lists them with `ConfFiles(dir, [".conf"])`. */
async function readPluginDir(confDir: string, name: string): Promise<PluginDir> {
  const path = join(confDir, name);
  const rel = relative(confDir, path);
  if (rel === '..' || rel.startsWith('../') || isAbsolute(rel)) return { name, outside: true };
  let entries: Dirent[];
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { name, path, missing: true };
    return { name, path, error: shortError(err) };
  }
  const confs = entries
    .filter((e) => !e.isDirectory() && e.name.endsWith('.conf'))
    .map((e) => e.name)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return { name, path, files: await Promise.all(confs.map((f) => readConfFile(join(path, f), f))) };
}

async function readConfDir(dir: string): Promise<Pick<Snapshot, 'files' | 'dirMissing' | 'dirError' | 'renamed'>> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { files: [], dirMissing: true };
    return { files: [], dirError: shortError(err) };
  }
  const kept = entries.filter((e) => !e.isDirectory());
  const names = kept.filter((e) => isConfFileName(e.name)).map((e) => e.name);
  const away = kept.filter((e) => renamedFrom(e.name) !== undefined).map((e) => e.name);
  const [files, renamed] = await Promise.all(
    [names, away].map((list) => Promise.all(list.map((name) => readConfFile(join(dir, name), name)))),
  );
  return renamed.length > 0 ? { files, renamed } : { files };
}

async function readConfFile(path: string, name: string): Promise<ConfFileEntry> {
  try {
    const info = await stat(path);
    if (!info.isFile())
      return { name, readError: info.isDirectory() ? 'EISDIR: is a directory' : 'not a regular file' };
    if (info.size > MAX_CONF_FILE_BYTES)
      return { name, readError: `larger than ${MAX_CONF_FILE_BYTES} bytes`, oversize: true };
    return { name, content: await readFile(path) };
  } catch (err) {
    return { name, readError: shortError(err) };
  }
}

async function readBinDirs(dirs: readonly string[]): Promise<Pick<Snapshot, 'binaries' | 'binDirErrors'>> {
  const perDir = await Promise.all(dirs.map((dir) => readBinDir(dir)));
  const binaries: Record<string, BinaryInfo> = {};
  const binDirErrors: Record<string, string> = {};
  for (const [i, result] of perDir.entries()) {
    if (typeof result === 'string') {
      binDirErrors[dirs[i]] = result;
      continue;
    }
    for (const [name, info] of result) if (!Object.hasOwn(binaries, name)) binaries[name] = info;
  }
  return Object.keys(binDirErrors).length > 0 ? { binaries, binDirErrors } : { binaries };
}

/** The regular files of one bin dir, in listing order, or the listing error. */
async function readBinDir(dir: string): Promise<Array<[string, BinaryInfo]> | string> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    return shortError(err);
  }
  const found = await Promise.all(
    names.map(async (name): Promise<[string, BinaryInfo] | undefined> => {
      try {
        const info = await stat(join(dir, name));
        if (!info.isFile()) return undefined;
        return [name, { exists: true, executable: (info.mode & 0o111) !== 0, dir }];
      } catch {
        return undefined; // dangling symlink or gone since the listing: FindInPath would not find it either
      }
    }),
  );
  return found.filter((x) => x !== undefined);
}

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** `ENOENT: no such file or directory` without the path Node appends (the file is named elsewhere). */
function shortError(err: unknown): string {
  return String((err as Error)?.message ?? err).split(', ')[0];
}
