/**
 * meshgate's CNI reading (src/cni: parseNetworkFile, selectNetwork over a snapshot read from disk) against the
 * REAL Go code of each libcni line (src/cni/types.ts LibcniLine): for containerd, go-cni's Load → GetConfig over
 * libcni v1.1.1, v1.2.3 and v1.3.1 (scripts/build-cni-oracle.sh); for CRI-O, CRI-O's own selection, ocicni's
 * InitCNI → loadNetworks with the plugin binaries really executed, over libcni v1.1.2, v1.2.3 and v1.3.0
 * (scripts/build-ocicni-oracle.sh, from ../shared/vendor/ocicni-*). This test builds nothing and fails, naming the
 * script, when a binary is missing. Compared per case and line: the files considered, loads or fails, the failing
 * file, every loaded network's name, cniVersion and plugin types in order, CRI-O's per-file outcome and default
 * network. Cases: the shared corpus and generated edge cases (test/cni/oracle-cases.ts, oracle-dirs.ts,
 * oracle-lines.ts). Every case must agree on every line; where the lines differ from each other, the difference
 * must be one src/cni/parse.ts documents.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNetworkFile } from '../../src/cni/parse.ts';
import { selectNetwork, sortedConfFiles } from '../../src/cni/runtime.ts';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import { LIBCNI_LINES, type LibcniLine, type Snapshot } from '../../src/cni/types.ts';
import {
  type OcicniResult,
  type OcicniRun,
  type OracleCase,
  type OracleNetwork,
  type OracleResult,
  type OracleRun,
  runOcicniOracle,
  runOracle,
} from './oracle-binary.ts';
import { type DirCase, fileCases, STANDARD_PLUGINS } from './oracle-cases.ts';
import { dirCases } from './oracle-dirs.ts';
import { FAKE_VERSIONS, failClosedCases, lineCases } from './oracle-lines.ts';

/** A fake plugin: answers CNI's VERSION command (what ValidateNetworkList runs) with every version the cases use. */
const FAKE_PLUGIN = `#!/bin/sh\necho '${JSON.stringify({ cniVersion: '1.0.0', supportedVersions: FAKE_VERSIONS })}'\n`;

/** The libcni each oracle must report linking, per line. */
const GOCNI_LIBCNI: Record<LibcniLine, string> = { '1.1': 'v1.1.1', '1.2': 'v1.2.3', '1.3': 'v1.3.1' };
const OCICNI_LIBCNI: Record<LibcniLine, string> = { '1.1': 'v1.1.2', '1.2': 'v1.2.3', '1.3': 'v1.3.0' };

/** What makes one line read a dir differently from the line before it (src/cni/parse.ts), by what the case holds. */
const LINE_DIFFERENCES: Array<{
  from: LibcniLine;
  to: LibcniLine;
  why: string;
  holds: (c: DirCase, text: string) => boolean;
}> = [
  { from: '1.1', to: '1.2', why: '"cniVersions" is read', holds: (_, t) => /"cniVersions"/.test(t) },
  {
    from: '1.1',
    to: '1.2',
    why: '"disableCheck" may be a string',
    holds: (_, t) => /"disableCheck"\s*:\s*"/.test(t),
  },
  {
    from: '1.1',
    to: '1.2',
    why: '"disableGC" must be a bool or "true"/"false"',
    holds: (_, t) => /"disableGC"/.test(t),
  },
  {
    from: '1.1',
    to: '1.2',
    why: 'a plugin\'s "cni.dev/valid-attachments" is a typed field',
    holds: (_, t) => /cni\.dev\/valid-attachments/i.test(t),
  },
  {
    from: '1.2',
    to: '1.3',
    why: '"loadOnlyInlinedPlugins" is read',
    holds: (_, t) => /"loadOnlyInlinedPlugins"/.test(t),
  },
  {
    from: '1.2',
    to: '1.3',
    why: 'a conflist takes plugins from <confdir>/<name>/*.conf too',
    holds: (c, t) =>
      c.id.startsWith('plugin dir:') ||
      Object.keys(c.files).some((f) => f.includes('/')) ||
      (Object.keys(c.files).some((f) => f.endsWith('.conf')) && /"name"\s*:\s*"\.?"/.test(t)),
  },
];

const cases: DirCase[] = [...fileCases(), ...dirCases(), ...lineCases()];
const closed = failClosedCases();
let root: string;
let oracleCases: OracleCase[];
let closedCases: OracleCase[];
const gocni = new Map<LibcniLine, OracleRun>();
const ocicni = new Map<LibcniLine, OcicniRun>();
const snapshots = new Map<string, Snapshot>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'meshgate-cni-oracle-'));
  const shared = join(root, 'bin');
  for (const name of STANDARD_PLUGINS) writeBinary(join(shared, name), 'exec');
  oracleCases = cases.map((c, i) => layOut(c, join(root, `case-${i}`), shared));
  closedCases = closed.map((c, i) => layOut(c, join(root, `closed-${i}`), shared));
  const all = [...oracleCases, ...closedCases];
  for (const line of LIBCNI_LINES) {
    gocni.set(line, runOracle(line, all));
    ocicni.set(line, runOcicniOracle(line, all));
  }
  for (const c of all) snapshots.set(c.id, await readSnapshot(c.confDir, c.binDirs));
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

/** meshgate's reading of one file of the snapshot by one line, in the oracle's terms. */
function meshgateNetwork(snapshot: Snapshot, file: string, line: LibcniLine): OracleNetwork | undefined {
  const entry = snapshot.files.find((f) => f.name === file);
  if (entry?.content === undefined) return undefined;
  const dirs = new Map((snapshot.pluginDirs ?? []).map((d) => [d.name, d]));
  const parsed = parseNetworkFile(file, entry.content, { line, pluginDir: (name) => dirs.get(name) });
  if (!parsed.ok) return undefined;
  const { name, cniVersion, plugins } = parsed.network;
  return { name, cniVersion, plugins: plugins.map((p) => p.type) };
}

/** The conf file go-cni's error names (the earliest full path in the message). */
function fileInError(error: string, c: OracleCase, files: string[]): string | undefined {
  const hits = files
    .map((f) => ({ f, at: error.search(new RegExp(`${escapeRegExp(join(c.confDir, f))}[: ]`)) }))
    .filter((h) => h.at >= 0);
  return hits.sort((a, b) => a.at - b.at)[0]?.f;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function sameFiles(snapshot: Snapshot, files: string[]): string[] {
  const mine = sortedConfFiles(snapshot.files).map((f) => f.name);
  return JSON.stringify(mine) === JSON.stringify(files) ? [] : [`files: libcni ${files.join(',')}, meshgate ${mine}`];
}

function compareContainerd(c: OracleCase, o: OracleResult, line: LibcniLine): string[] {
  const snapshot = snapshots.get(c.id)!;
  const sel = selectNetwork(snapshot, 'containerd', c.maxConfNum, line);
  const want = o.containerd;
  const files = sameFiles(snapshot, o.files);
  if (want.ok !== sel.ok) {
    const mine = sel.ok ? 'loads' : `fails (${sel.reason}: ${sel.detail})`;
    return [...files, `go-cni ${want.ok ? 'loads' : `fails (${want.error})`}, meshgate ${mine}`];
  }
  if (!sel.ok) {
    const failing = fileInError(want.error ?? '', c, o.files);
    const reasonOk = failing ? sel.reason !== 'no_config' : sel.reason === 'no_config';
    return failing === sel.file && reasonOk
      ? files
      : [...files, `go-cni fails at ${failing ?? 'no file'}, meshgate at ${sel.file ?? 'no file'} (${sel.reason})`];
  }
  const loaded = sel.candidates.filter((x) => x.outcome === 'selected' || x.outcome === 'loaded').map((x) => x.file);
  const nets = want.networks ?? [];
  if (JSON.stringify(loaded) !== JSON.stringify(nets.map((n) => n.file))) {
    return [...files, `go-cni loads ${nets.map((n) => n.file).join(',')}, meshgate ${loaded.join(',')}`];
  }
  return [
    ...files,
    ...nets.flatMap((n) => {
      const mine = meshgateNetwork(snapshot, n.file!, line);
      return show(mine) === show(n) ? [] : [`${n.file}: go-cni ${show(n)}, meshgate ${show(mine)}`];
    }),
  ];
}

const CRIO_OUTCOMES: Record<string, string> = {
  selected: 'loaded',
  unreadable: 'load_error',
  unparsable: 'load_error',
  binary_missing: 'invalid',
  binary_not_executable: 'invalid',
};

function compareCrio(c: OracleCase, o: OcicniResult, line: LibcniLine): string[] {
  const snapshot = snapshots.get(c.id)!;
  const sel = selectNetwork(snapshot, 'crio', 0, line);
  const problems = sameFiles(
    snapshot,
    o.files.map((f) => f.file),
  );
  if (o.error) problems.push(`ocicni failed: ${o.error}`);
  const mine = sel.ok
    ? {
        file: sel.selected.file.name,
        ...sel.selected.network,
        plugins: sel.selected.network.plugins.map((p) => p.type),
      }
    : undefined;
  const theirs = o.default;
  if (mine?.file !== theirs?.file || show(mine) !== show(theirs)) {
    problems.push(
      `default: ocicni ${theirs?.file ?? '-'} ${show(theirs)}, meshgate ${mine?.file ?? '-'} ${show(mine)}`,
    );
  }
  for (const [i, f] of o.files.entries()) {
    const candidate = sel.candidates[i];
    if (candidate?.file !== f.file) problems.push(`file ${i}: ocicni ${f.file}, meshgate ${candidate?.file}`);
    else if (CRIO_OUTCOMES[candidate.outcome] !== f.outcome)
      problems.push(
        `${f.file}: ocicni ${f.outcome} (${f.error ?? ''}), meshgate ${candidate.outcome} (${candidate.detail ?? ''})`,
      );
    if (f.file === theirs?.file) break;
  }
  return problems;
}

/** The cases on which an oracle's results (in case order) and `compare` find meshgate disagreeing: case id → problems. */
function disagreements<R>(results: R[], compare: (c: OracleCase, o: R) => string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [i, c] of oracleCases.entries()) {
    const problems = compare(c, results[i]);
    if (problems.length > 0) out[c.id] = problems;
  }
  return out;
}

/** What a line's oracles made of a case, as one string per runtime (for finding where the lines differ). */
function outcomeOf(line: LibcniLine, i: number): string {
  const g = gocni.get(line)!.results[i].containerd;
  const o = ocicni.get(line)!.results[i];
  return JSON.stringify([
    g.ok,
    g.networks?.map((n) => [n.file, n.name, n.cniVersion, n.plugins]),
    o.default,
    o.files.map((f) => f.outcome),
  ]);
}

describe('CNI config reading vs the real Go code, per libcni line', () => {
  it('runs every case through every oracle', () => {
    const ids = [...oracleCases, ...closedCases].map((c) => c.id);
    for (const line of LIBCNI_LINES) {
      expect(gocni.get(line)!.results.map((r) => r.id)).toEqual(ids);
      expect(ocicni.get(line)!.results.map((r) => r.id)).toEqual(ids);
      expect(gocni.get(line)!.libcni).toBe(GOCNI_LIBCNI[line]);
      expect(ocicni.get(line)!.libcni).toBe(OCICNI_LIBCNI[line]);
    }
  });

  it.each(LIBCNI_LINES)('containerd (go-cni) on libcni %s agrees on every case', (line) => {
    const run = gocni.get(line)!;
    const bad = disagreements(run.results, (c, o) => compareContainerd(c, o, line));
    const n = oracleCases.length;
    console.log(
      `containerd emulation, libcni ${line} vs go-cni ${run.goCni} + libcni ${run.libcni} (${run.go}): ` +
        `${n - Object.keys(bad).length}/${n} cases agree`,
    );
    expect(bad).toEqual({});
  });

  it.each(LIBCNI_LINES)('CRI-O (ocicni) on libcni %s agrees on every case', (line) => {
    const run = ocicni.get(line)!;
    const bad = disagreements(run.results, (c, o) => compareCrio(c, o, line));
    const n = oracleCases.length;
    console.log(
      `CRI-O emulation, libcni ${line} vs ${run.ocicni} + libcni ${run.libcni}: ` +
        `${n - Object.keys(bad).length}/${n} cases agree`,
    );
    expect(bad).toEqual({});
  });

  it('where the lines read a dir differently, src/cni/parse.ts says why', () => {
    for (const [from, to] of [
      ['1.1', '1.2'],
      ['1.2', '1.3'],
    ] as const) {
      const reasons = LINE_DIFFERENCES.filter((d) => d.from === from && d.to === to);
      const unexplained: string[] = [];
      const hits = new Map<string, number>();
      let differing = 0;
      for (const [i, c] of cases.entries()) {
        if (outcomeOf(from, i) === outcomeOf(to, i)) continue;
        differing++;
        const text = Object.entries(c.files)
          .map(([name, content]) => `${name}\n${content ?? ''}`)
          .join('\n');
        const why = reasons.find((d) => d.holds(c, text));
        if (why) hits.set(why.why, (hits.get(why.why) ?? 0) + 1);
        else unexplained.push(c.id);
      }
      console.log(`libcni ${from} → ${to}: ${differing} of ${cases.length} cases read differently`);
      for (const d of reasons) console.log(`  ${hits.get(d.why) ?? 0} cases: ${d.why}`);
      expect(unexplained).toEqual([]);
      for (const d of reasons) expect(hits.get(d.why), `no case shows "${d.why}"`).toBeGreaterThan(0);
    }
  });

  it('refuses to judge (fail closed) what the runtime reads and meshgate cannot', () => {
    for (const [i, c] of closedCases.entries()) {
      const snapshot = snapshots.get(c.id)!;
      const index = oracleCases.length + i;
      // libcni 1.3 loads the file (the dir it names outside does not exist here); meshgate stops there, unverified.
      expect(gocni.get('1.3')!.results[index].containerd.ok, closed[i].failClosed).toBe(true);
      expect(ocicni.get('1.3')!.results[index].default?.file).toBe('10-a.conflist');
      for (const runtime of ['containerd', 'crio'] as const) {
        const sel = selectNetwork(snapshot, runtime, 1, '1.3');
        expect(sel).toMatchObject({ ok: false, reason: 'unreadable', file: '10-a.conflist' });
        // The lines that do not read plugin dirs judge it as the oracles do.
        expect(compareContainerd(c, gocni.get('1.2')!.results[index], '1.2')).toEqual([]);
        expect(compareCrio(c, ocicni.get('1.2')!.results[index], '1.2')).toEqual([]);
      }
    }
  });
});
