/**
 * meshgate's CNI reading (src/cni: parseNetworkFile, selectNetwork over a snapshot read from disk) against the
 * REAL Go code: test/cni/oracle links libcni and go-cni (built by scripts/build-cni-oracle.sh; this test builds
 * nothing and fails, naming the script, when the binary is missing). Compared per case, for containerd (go-cni
 * Load → GetConfig) and CRI-O (ocicni's loadNetworks loop over libcni, binaries really executed): the files
 * considered, loads or fails, the failing file, every loaded network's name, cniVersion and plugin types in
 * order, CRI-O's per-file outcome and default network. Cases: the shared corpus and generated edge cases
 * (test/cni/oracle-cases.ts, test/cni/oracle-dirs.ts). Against libcni as containerd 1.6.20 vendors it every
 * case must agree; against the newest libcni the differences must be exactly the documented ones below.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNetworkFile } from '../../src/cni/parse.ts';
import { selectNetwork, sortedConfFiles } from '../../src/cni/runtime.ts';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import type { Snapshot } from '../../src/cni/types.ts';
import { type OracleCase, type OracleNetwork, type OracleResult, type OracleRun, runOracle } from './oracle-binary.ts';
import { type DirCase, fileCases, STANDARD_PLUGINS } from './oracle-cases.ts';
import { dirCases } from './oracle-dirs.ts';

/** A fake plugin: answers CNI's VERSION command (what ValidateNetworkList runs) with every released spec version. */
const FAKE_PLUGIN = `#!/bin/sh\necho '{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}'\n`;

/** Where the newest libcni (v1.3.x) reads files differently from v1.1.1; meshgate follows v1.1.1 (src/cni/parse.ts). */
const LATEST_DIFFERENCES: Array<{ ids: RegExp; why: string }> = [
  {
    ids: /^(conflist )?plugin cni\.dev\/valid-attachments=/,
    why: 'a plugin\'s "cni.dev/valid-attachments" must be a list of {containerID, ifname} (v1.1.1 ignores the key)',
  },
  {
    ids: /^conflist top (disableGC|loadOnlyInlinedPlugins)=/,
    why: '"disableGC" and "loadOnlyInlinedPlugins" must be a bool or "true"/"false" in any case (v1.1.1 ignores them)',
  },
  {
    ids: /^conflist top disableCheck="(true|FALSE)"$/,
    why: '"disableCheck" may be the string "true"/"false" in any case (v1.1.1 wants a JSON bool)',
  },
  {
    ids: /^conflist top cniVersions=/,
    why: '"cniVersions" must be a list of version strings and its highest supported one replaces "cniVersion" (v1.1.1 ignores it)',
  },
  {
    ids: /^plugin dir: /,
    why: 'a conflist also takes plugins from <confdir>/<name>/*.conf, appended to its own list; an empty name reads the conf dir itself (v1.1.1 reads only the file)',
  },
];

const cases: DirCase[] = [...fileCases(), ...dirCases()];
let root: string;
let oracleCases: OracleCase[];
let old: OracleRun;
let latest: OracleRun;
const snapshots = new Map<string, Snapshot>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'meshgate-cni-oracle-'));
  const shared = join(root, 'bin');
  for (const name of STANDARD_PLUGINS) writeBinary(join(shared, name), 'exec');
  oracleCases = cases.map((c, i) => layOut(c, join(root, `case-${i}`), shared));
  old = runOracle('cni-oracle', oracleCases);
  latest = runOracle('cni-oracle-latest', oracleCases);
  for (const c of oracleCases) snapshots.set(c.id, await readSnapshot(c.confDir, c.binDirs));
}, 600_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function writeBinary(path: string, mode: 'exec' | 'noexec' | 'dir'): void {
  mkdirSync(dirname(path), { recursive: true });
  if (mode === 'dir') return void mkdirSync(path);
  writeFileSync(path, FAKE_PLUGIN);
  chmodSync(path, mode === 'exec' ? 0o755 : 0o644);
}

function layOut(c: DirCase, dir: string, sharedBin: string): OracleCase {
  const confDir = join(dir, 'net.d');
  mkdirSync(confDir, { recursive: true });
  for (const [name, content] of Object.entries(c.files)) {
    const path = join(confDir, name);
    mkdirSync(dirname(path), { recursive: true });
    if (content === null) mkdirSync(path);
    else writeFileSync(path, content);
  }
  let binDirs = [sharedBin];
  if (c.bins) {
    binDirs = [join(dir, 'bin0'), join(dir, 'bin1')];
    for (const d of binDirs) mkdirSync(d, { recursive: true });
    for (const [key, mode] of Object.entries(c.bins)) writeBinary(join(dir, `bin${key}`), mode);
  }
  return { id: c.id, confDir, binDirs, maxConfNum: c.maxConfNum ?? 1 };
}

const show = (n?: OracleNetwork) =>
  n ? `${JSON.stringify(n.name)} v${JSON.stringify(n.cniVersion)} [${n.plugins.join(', ')}]` : 'none';

/** meshgate's reading of one file of the snapshot, in the oracle's terms. */
function meshgateNetwork(snapshot: Snapshot, file: string): OracleNetwork | undefined {
  const entry = snapshot.files.find((f) => f.name === file);
  if (entry?.content === undefined) return undefined;
  const parsed = parseNetworkFile(file, entry.content);
  if (!parsed.ok) return undefined;
  return {
    name: parsed.network.name,
    cniVersion: parsed.network.cniVersion,
    plugins: parsed.network.plugins.map((p) => p.type),
  };
}

/** The conf file go-cni's error names (the earliest full path in the message). */
function fileInError(error: string, c: OracleCase, files: string[]): string | undefined {
  const hits = files
    .map((f) => ({ f, at: error.search(new RegExp(`${escapeJson(join(c.confDir, f))}[: ]`)) }))
    .filter((h) => h.at >= 0);
  return hits.sort((a, b) => a.at - b.at)[0]?.f;
}

function escapeJson(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function compare(c: OracleCase, o: OracleResult): { containerd: string[]; crio: string[] } {
  const snapshot = snapshots.get(c.id)!;
  const files = sortedConfFiles(snapshot.files).map((f) => f.name);
  const common =
    JSON.stringify(files) === JSON.stringify(o.files)
      ? []
      : [`files: libcni ${o.files.join(',')}, meshgate ${files.join(',')}`];
  return {
    containerd: [...common, ...compareContainerd(c, snapshot, o)],
    crio: [...common, ...compareCrio(snapshot, o)],
  };
}

function compareContainerd(c: OracleCase, snapshot: Snapshot, o: OracleResult): string[] {
  const sel = selectNetwork(snapshot, 'containerd', c.maxConfNum);
  const want = o.containerd;
  if (want.ok !== sel.ok) {
    return [
      `containerd: go-cni ${want.ok ? 'loads' : `fails (${want.error})`}, meshgate ${sel.ok ? 'loads' : `fails (${sel.reason}: ${sel.detail})`}`,
    ];
  }
  if (!sel.ok) {
    const failing = fileInError(want.error ?? '', c, o.files);
    const reasonOk = failing ? sel.reason !== 'no_config' : sel.reason === 'no_config';
    return failing === sel.file && reasonOk
      ? []
      : [`containerd: go-cni fails at ${failing ?? 'no file'}, meshgate at ${sel.file ?? 'no file'} (${sel.reason})`];
  }
  const loaded = sel.candidates.filter((x) => x.outcome === 'selected' || x.outcome === 'loaded').map((x) => x.file);
  const nets = want.networks ?? [];
  if (JSON.stringify(loaded) !== JSON.stringify(nets.map((n) => n.file))) {
    return [`containerd: go-cni loads ${nets.map((n) => n.file).join(',')}, meshgate ${loaded.join(',')}`];
  }
  return nets.flatMap((n) => {
    const mine = meshgateNetwork(snapshot, n.file!);
    return show(mine) === show(n) ? [] : [`containerd ${n.file}: go-cni ${show(n)}, meshgate ${show(mine)}`];
  });
}

const CRIO_OUTCOMES: Record<string, string> = {
  selected: 'loaded',
  unreadable: 'load_error',
  unparsable: 'load_error',
  binary_missing: 'invalid',
  binary_not_executable: 'invalid',
};

function compareCrio(snapshot: Snapshot, o: OracleResult): string[] {
  const sel = selectNetwork(snapshot, 'crio', 0);
  const problems: string[] = [];
  const mineDefault = sel.ok ? sel.selected.file.name : undefined;
  if (mineDefault !== o.crio.default)
    problems.push(`crio default: ocicni ${o.crio.default ?? 'none'}, meshgate ${mineDefault ?? 'none'}`);
  for (const [i, f] of o.crio.files.entries()) {
    const mine = sel.candidates[i];
    if (mine?.file !== f.file) problems.push(`crio file ${i}: ocicni ${f.file}, meshgate ${mine?.file}`);
    else if (CRIO_OUTCOMES[mine.outcome] !== f.outcome)
      problems.push(
        `crio ${f.file}: ocicni ${f.outcome} (${f.error ?? ''}), meshgate ${mine.outcome} (${mine.detail ?? ''})`,
      );
    if (f.network && show(meshgateNetwork(snapshot, f.file)) !== show(f.network)) {
      problems.push(`crio ${f.file}: libcni ${show(f.network)}, meshgate ${show(meshgateNetwork(snapshot, f.file))}`);
    }
    if (f.file === o.crio.default) break;
  }
  return problems;
}

function disagreements(run: OracleRun): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [i, o] of run.results.entries()) {
    const { containerd, crio } = compare(oracleCases[i], o);
    if (containerd.length + crio.length > 0) out.set(o.id, [...containerd, ...crio]);
  }
  return out;
}

function summary(run: OracleRun, bad: Map<string, string[]>): string {
  const total = run.results.length * 2;
  const failing = [...bad.values()].reduce(
    (n, p) =>
      n +
      (p.some((x) => x.startsWith('containerd') || x.startsWith('files')) ? 1 : 0) +
      (p.some((x) => !x.startsWith('containerd')) ? 1 : 0),
    0,
  );
  return `cni emulation vs libcni ${run.libcni} (go-cni ${run.goCni}; CRI-O: ocicni's loop over libcni ${run.libcni}; ${run.go}): ${total - failing}/${total} agree (${run.results.length} cases × containerd, CRI-O)`;
}

describe('CNI config reading vs the real Go code', () => {
  it('agrees with libcni and go-cni as containerd 1.6.20 builds them, on every case', () => {
    expect(old.results.map((r) => r.id)).toEqual(oracleCases.map((c) => c.id));
    const bad = disagreements(old);
    console.log(summary(old, bad));
    expect(Object.fromEntries(bad)).toEqual({});
  });

  it('differs from the newest libcni exactly where documented', () => {
    const bad = disagreements(latest);
    console.log(summary(latest, bad));
    const undocumented = [...bad].filter(([id]) => !LATEST_DIFFERENCES.some((d) => d.ids.test(id)));
    expect(Object.fromEntries(undocumented)).toEqual({});
    for (const d of LATEST_DIFFERENCES) {
      const hits = [...bad.keys()].filter((id) => d.ids.test(id));
      console.log(`  newest libcni differs (${hits.length} cases): ${d.why}`);
      expect(hits.length, `no case shows "${d.why}"`).toBeGreaterThan(0);
    }
  });
});
