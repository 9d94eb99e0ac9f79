/**
 * Which network configuration the container runtime takes from the conf dir. Both runtimes list the dir with
 * libcni's `ConfFiles(dir, [".conf", ".conflist", ".json"])` (the extension is Go's `filepath.Ext`: the part from
 * the last dot, so `x.conflist.bak` is ignored; directories are skipped; a missing dir is "no files", any other
 * listing error is an error) and sort the names with `sort.Strings` (byte order). Then:
 *
 * - containerd (CRI plugin → go-cni v1.1.6 `loadFromConfDir`, `WithDefaultConf`): loads the files in order until
 *   it has `max_conf_num` networks (default 1; 0 = all). ANY error on the way (unreadable, does not parse)
 *   aborts the whole load: containerd then has no network and pods fail to start ("cni plugin not initialized").
 *   The first loaded network is the pod's default (eth0).
 * - CRI-O (ocicni `loadNetworks`): skips every file that cannot be read or parsed, or whose plugin binaries fail
 *   `ValidateNetworkList` (looked up with `FindInPath`: the first bin dir holding a regular file of that name),
 *   and takes the first remaining file as the default network (when `cni_default_network` is unset); a network
 *   without a name is named after its file (ocicni's fallback), which is the name its ADD then checks.
 * Files are read as the node's libcni line reads them (src/cni/parse.ts). Both loops agree with the real go-cni
 * and ocicni of each line over the oracle's cases (test/cni/oracle.test.ts). Fail-closed choices where meshgate
 * cannot know what the runtime does: a file over meshgate's 2 MiB read limit (the runtimes have none), or a
 * conflist whose libcni 1.3 plugin dir meshgate cannot read, stops the selection as `unreadable` for both runtimes
 * instead of being judged or skipped; and
 * ValidateNetworkList also runs each binary's VERSION command and skips the file when the plugin does not support
 * its cniVersion, which meshgate cannot run, so "valid" here means present and executable.
 */
import type { ParsedNetwork } from './parse.ts';
import { parseNetworkFile } from './parse.ts';
import type { CniReasonCode } from './reasons.ts';
import type { Candidate, ConfFileEntry, LibcniLine, PluginDir, Runtime, Snapshot } from './types.ts';

export const CONF_EXTENSIONS: readonly string[] = ['.conf', '.conflist', '.json'];

/**
 * The largest configuration file meshgate reads (2 MiB: real CNI files are a few KiB, the node agent re-reads on
 * every change, and memory per read must stay bounded). The runtimes read any size; a larger file is judged
 * fail-closed (see above).
 */
export const MAX_CONF_FILE_BYTES = 2 * 1024 * 1024;

export interface LoadedNetwork {
  file: ConfFileEntry;
  network: ParsedNetwork;
}

export type Selection =
  | { ok: true; selected: LoadedNetwork; candidates: Candidate[] }
  | { ok: false; reason: CniReasonCode; file?: string; detail?: string; candidates: Candidate[] };

/** Go's `filepath.Ext(name)` is one of the three extensions. */
export function isConfFileName(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return dot >= 0 && CONF_EXTENSIONS.includes(name.slice(dot));
}

/** The candidate files in the order the runtime tries them: byte order of the UTF-8 names, as Go sorts strings. */
export function sortedConfFiles(files: readonly ConfFileEntry[]): ConfFileEntry[] {
  return files
    .filter((f) => isConfFileName(f.name))
    .sort((a, b) => Buffer.compare(Buffer.from(a.name, 'utf8'), Buffer.from(b.name, 'utf8')));
}

export function selectNetwork(snapshot: Snapshot, runtime: Runtime, maxConfNum: number, line: LibcniLine): Selection {
  if (snapshot.dirError)
    return { ok: false, reason: 'unreadable', detail: `conf dir: ${snapshot.dirError}`, candidates: [] };
  const files = sortedConfFiles(snapshot.files);
  if (files.length === 0) {
    const detail = snapshot.dirMissing ? 'the conf dir does not exist' : undefined;
    return { ok: false, reason: 'no_config', detail, candidates: [] };
  }
  const load = loader(snapshot, line);
  return runtime === 'crio' ? selectCrio(snapshot, files, load) : selectContainerd(files, maxConfNum, load);
}

function selectContainerd(files: ConfFileEntry[], maxConfNum: number, load: Loader): Selection {
  const candidates: Candidate[] = [];
  const loaded: LoadedNetwork[] = [];
  let failure: Extract<Selection, { ok: false }> | undefined;
  for (const file of files) {
    if (failure) {
      candidates.push({ file: file.name, outcome: 'not_considered', detail: 'containerd stopped at the error above' });
      continue;
    }
    if (maxConfNum > 0 && loaded.length === maxConfNum) {
      candidates.push({ file: file.name, outcome: 'not_considered', detail: `beyond max_conf_num ${maxConfNum}` });
      continue;
    }
    const result = load(file);
    if (!result.ok) {
      const reason: CniReasonCode = result.outcome === 'unreadable' ? 'unreadable' : 'unparsable_first_file';
      candidates.push({ file: file.name, outcome: result.outcome, detail: result.error });
      failure = { ok: false, reason, file: file.name, detail: result.error, candidates };
      continue;
    }
    candidates.push({ file: file.name, outcome: loaded.length === 0 ? 'selected' : 'loaded' });
    loaded.push(result.loaded);
  }
  return failure ?? { ok: true, selected: loaded[0], candidates };
}

function selectCrio(snapshot: Snapshot, files: ConfFileEntry[], load: Loader): Selection {
  const candidates: Candidate[] = [];
  let selected: LoadedNetwork | undefined;
  let stop: Extract<Selection, { ok: false }> | undefined;
  for (const file of files) {
    if (selected || stop) {
      const detail = selected ? 'an earlier file is the default network' : 'meshgate stopped at the file above';
      candidates.push({ file: file.name, outcome: 'not_considered', detail });
      continue;
    }
    const result = load(file);
    if (!result.ok) {
      candidates.push({ file: file.name, outcome: result.outcome, detail: result.error });
      // CRI-O would read and judge what meshgate does not; not knowing what it would make of it, stop (fail closed).
      if (result.undecidable)
        stop = { ok: false, reason: 'unreadable', file: file.name, detail: result.error, candidates };
      continue;
    }
    const problem = binaryProblems(
      snapshot,
      result.loaded.network.plugins.map((p) => p.type),
    )[0];
    if (problem) {
      candidates.push({ file: file.name, outcome: problem.outcome, detail: problem.detail });
      continue;
    }
    candidates.push({ file: file.name, outcome: 'selected' });
    const { network } = result.loaded;
    // ocicni: `if confList.Name == "" { confList.Name = path.Base(confFile) }`.
    selected = network.name === '' ? { ...result.loaded, network: { ...network, name: file.name } } : result.loaded;
  }
  if (stop) return stop;
  if (!selected) {
    const detail = candidates.map((c) => `${c.file} ${c.outcome.replaceAll('_', ' ')}`).join(', ');
    return { ok: false, reason: 'no_valid_config', detail: `skipped ${detail}`, candidates };
  }
  return { ok: true, selected, candidates };
}

type LoadResult =
  | { ok: true; loaded: LoadedNetwork }
  /** `undecidable`: the runtime reads what meshgate did not (an oversize file, a plugin dir outside the conf dir). */
  | { ok: false; outcome: 'unreadable' | 'unparsable'; error: string; undecidable?: boolean };

type Loader = (file: ConfFileEntry) => LoadResult;

function loader(snapshot: Snapshot, line: LibcniLine): Loader {
  const dirs = new Map<string, PluginDir>((snapshot.pluginDirs ?? []).map((d) => [d.name, d]));
  const pluginDir = (name: string) => dirs.get(name);
  return (file) => {
    const size = typeof file.content === 'string' ? Buffer.byteLength(file.content, 'utf8') : file.content?.byteLength;
    if (file.oversize || (size ?? 0) > MAX_CONF_FILE_BYTES) {
      return {
        ok: false,
        outcome: 'unreadable',
        error: `larger than meshgate's ${MAX_CONF_FILE_BYTES}-byte limit, not judged`,
        undecidable: true,
      };
    }
    if (file.content === undefined) return { ok: false, outcome: 'unreadable', error: file.readError ?? 'not read' };
    const parsed = parseNetworkFile(file.name, file.content, { line, pluginDir });
    if (!parsed.ok) {
      return parsed.undecidable
        ? { ok: false, outcome: 'unreadable', error: `${parsed.error}, not judged`, undecidable: true }
        : { ok: false, outcome: 'unparsable', error: parsed.error };
    }
    return { ok: true, loaded: { file, network: parsed.network } };
  };
}

export interface BinaryProblem {
  type: string;
  outcome: 'binary_missing' | 'binary_not_executable';
  detail: string;
}

/** Plugins of a chain whose binary the runtime would not find (FindInPath) or could not execute, in chain order. */
export function binaryProblems(snapshot: Snapshot, types: readonly string[]): BinaryProblem[] {
  const dirs = (snapshot.binDirs ?? []).join(', ') || 'the bin dirs';
  const problems: BinaryProblem[] = [];
  for (const type of new Set(types)) {
    // FindInPath rejects names containing a path separator before looking anything up.
    const bin = !type.includes('/') && Object.hasOwn(snapshot.binaries, type) ? snapshot.binaries[type] : undefined;
    if (!bin?.exists) problems.push({ type, outcome: 'binary_missing', detail: `no binary ${type} in ${dirs}` });
    else if (!bin.executable) {
      problems.push({ type, outcome: 'binary_not_executable', detail: `${bin.dir ?? dirs}/${type} is not executable` });
    }
  }
  return problems;
}
