// The emulation against the real runtime (issue 13): for every case (emulation/cases.ts), what `check-node` predicts
// (src/cni: readSnapshot + verifyChain with runtime containerd, max_conf_num 1 — the node agent's code) against what
// the nodes' containerd (1.6.20, or 2.4.2 on the 2.4 lines: predicted with libcni line 1.3) really did with the same
// conf and bin dir (emulation/runtime.ts):
//   loaded  the network containerd took as the pod's default (name, plugin types in order), or that it loaded none
//           (and, then, which file its error names)
//   ran     the plugins that ran on ADD, in order, and whether the sandbox started: predicted as the loaded chain up
//           to its first plugin without an executable binary (where libcni's ADD stops), started only if none
// A case agrees when both match. Besides, a verdict "verified" for a chain whose sandbox started WITHOUT the mesh
// plugin running after the first plugin would be unsafe: those are counted on their own.
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readSnapshot, selectNetwork, verifyChain } from '../../../src/cni/index.ts';
import type { LibcniLine, Snapshot, ChainVerdict } from '../../../src/cni/types.ts';
import type { TierRuntime } from '../harness/containerd2.ts';
import { STANDARD_PLUGINS } from '../../cni/oracle-cases.ts';
import type { RealCluster } from '../harness/cluster.ts';
import { emulationCases, type EmulationCase } from './cases.ts';
import { startEmulationRuntime, type EmulationRuntime, type RuntimeStatus } from './runtime.ts';

const MESH_PLUGIN = 'istio-cni';
/** Every case's bin dir also has a recording `loopback`: go-cni runs its lo network first, for every pod. */
const ALWAYS = ['loopback'];
/** A containerd reload takes milliseconds; 15 s only bounds a stuck one. */
const LOAD_TIMEOUT_MS = 15_000;
/** Same status twice this far apart: no load of the case's files is still in flight. */
const SETTLE_MS = 100;

export interface EmulationReport {
  line: string;
  cases: number;
  disagreements: string[];
  /** The disagreements grouped by containerd's own error (or the kind of mismatch), most frequent first. */
  causes: string[];
}

/** A disagreement's cause, as containerd worded it when it has an error ("missing network name", ...). */
function causeOf(why: string): string {
  const add = /failed \(add\): ([^:;]+)/.exec(why)?.[1];
  if (add) return `the sandbox failed at ADD: ${add.trim()}`;
  if (why.includes('UNSAFE')) return 'unsafe verdict';
  if (why.includes('could not be compared')) return 'could not be compared';
  return why
    .replace(/^[^:]*: /, '')
    .split(';')[0]
    .slice(0, 80);
}

interface Observed {
  loaded?: { name: string; plugins: string[] };
  loadError?: string;
  ran: string[];
  sandboxError?: string;
}

interface Predicted {
  verdict: ChainVerdict;
  loaded?: { name: string; plugins: string[] };
  /** The file a failed load names (containerd's error names it too), when there is one. */
  failingFile?: string;
  ran: string[];
  starts: boolean;
}

const syncName = (n: number) => `!sync-${n}.conflist`; // '!' sorts before every case file's name
const syncNetwork = (n: number) => `meshgate-e2e-sync-${n}`;

function writeSync(rt: EmulationRuntime, n: number): void {
  writeFileSync(
    join(rt.paths.cniConfDir, syncName(n)),
    JSON.stringify({ cniVersion: '1.0.0', name: syncNetwork(n), plugins: [{ type: 'meshgate-e2e-sync' }] }),
  );
}

/**
 * Waits until containerd's loaded state is the case's. While `!sync-<n>.conflist` exists it sorts first and is
 * what containerd loads; the case's files are written first, the sync file removed last, so the first state
 * without it comes from a load of the final directory — except a load that listed the directory before the
 * removal and read the sync file after it, whose error names the sync file (skipped). The status' last-load
 * field is updated just after the networks, so both must agree (two networks ⇔ "OK").
 */
async function waitLoaded(rt: EmulationRuntime, n: number): Promise<RuntimeStatus> {
  const deadline = Date.now() + LOAD_TIMEOUT_MS;
  let last = '';
  for (;;) {
    const st = await rt.status();
    const key = JSON.stringify(st);
    const final =
      !st.networks.some((x) => x.name === syncNetwork(n)) &&
      !st.lastLoad.includes('!sync-') &&
      st.networks.length >= 2 === (st.lastLoad === 'OK');
    if (final && key === last) return st;
    last = final ? key : '';
    if (Date.now() > deadline)
      throw new Error(
        `containerd did not load the case's files within ${LOAD_TIMEOUT_MS / 1000} s (last status ${key})`,
      );
    await new Promise((r) => setTimeout(r, final ? SETTLE_MS : 20));
  }
}

async function waitSync(rt: EmulationRuntime, n: number): Promise<void> {
  const deadline = Date.now() + LOAD_TIMEOUT_MS;
  while ((await rt.status()).networks[1]?.name !== syncNetwork(n)) {
    if (Date.now() > deadline)
      throw new Error(`containerd did not load ${syncName(n)} within ${LOAD_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The case's bin dir: recorders under every standard plugin name, or exactly the case's binaries. */
function layBins(rt: EmulationRuntime, c: EmulationCase): void {
  const dir = rt.paths.cniBinDir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const script = readFileSync(rt.recorderScript);
  const put = (name: string, mode: 'exec' | 'noexec' | 'dir') => {
    if (mode === 'dir') return void mkdirSync(join(dir, name));
    writeFileSync(join(dir, name), script);
    chmodSync(join(dir, name), mode === 'exec' ? 0o755 : 0o644);
  };
  const bins = c.bins
    ? Object.entries(c.bins).map(([k, mode]) => [k.slice(2), mode] as const)
    : STANDARD_PLUGINS.map((p) => [p, 'exec'] as const);
  for (const [name, mode] of bins) put(name, mode);
  for (const name of ALWAYS) if (!bins.some(([b]) => b === name)) put(name, 'exec');
}

function layFiles(rt: EmulationRuntime, c: EmulationCase): void {
  for (const [name, content] of Object.entries(c.files)) {
    const path = join(rt.paths.cniConfDir, name);
    mkdirSync(dirname(path), { recursive: true });
    if (content === null) mkdirSync(path, { recursive: true });
    else writeFileSync(path, content);
  }
}

function clearCaseFiles(rt: EmulationRuntime, keep: string): void {
  for (const f of readdirSync(rt.paths.cniConfDir))
    if (f !== keep) rmSync(join(rt.paths.cniConfDir, f), { recursive: true, force: true });
}

/** What the node agent derives from the runtime the kubelets report (src/cni/runtime-version.ts), and the label. */
const RUNTIMES: Record<TierRuntime, { line: LibcniLine; what: string }> = {
  'containerd-1.6': { line: '1.1', what: 'containerd 1.6.20 (CRI, go-cni 1.1.6, libcni 1.1.1)' },
  'containerd-2.4': { line: '1.3', what: 'containerd 2.4.2 (CRI, go-cni 1.1.14, libcni 1.3.1)' },
};

function predict(snapshot: Snapshot, libcni: LibcniLine): Predicted {
  const options = { runtime: 'containerd' as const, libcni, pluginType: MESH_PLUGIN, maxConfNum: 1 };
  const verdict = verifyChain(snapshot, options);
  const selection = selectNetwork(snapshot, 'containerd', 1, libcni);
  if (!selection.ok) return { verdict, failingFile: selection.file, ran: [], starts: false };
  const plugins = selection.selected.network.plugins.map((p) => p.type);
  // libcni refuses the network's name before any plugin runs.
  if (verdict.reason === 'invalid_network_name') {
    return { verdict, loaded: { name: selection.selected.network.name, plugins }, ran: [], starts: false };
  }
  const usable = (p: string) => snapshot.binaries[p]?.exists === true && snapshot.binaries[p]?.executable === true;
  const stop = plugins.findIndex((p) => !usable(p));
  return {
    verdict,
    loaded: { name: selection.selected.network.name, plugins },
    ran: stop < 0 ? plugins : plugins.slice(0, stop),
    starts: stop < 0,
  };
}

async function observe(rt: EmulationRuntime, n: number, i: number): Promise<Observed> {
  const st = await waitLoaded(rt, n);
  writeFileSync(rt.recordLog, '');
  const sandbox = await rt.runSandbox(`emu-${i}`, randomUUID());
  const ran = readFileSync(rt.recordLog, 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter(([cmd, ifname]) => cmd === 'ADD' && ifname === 'eth0')
    .map(([, , name]) => name);
  if (sandbox.id) {
    const err = await rt.removeSandbox(sandbox.id);
    if (err) throw new Error(`removing sandbox ${sandbox.id}: ${err}`);
  }
  const loaded = st.networks.length >= 2 ? st.networks[1] : undefined;
  return { loaded, loadError: loaded ? undefined : st.lastLoad, ran, sandboxError: sandbox.error };
}

const chain = (p: string[]) => (p.length ? p.map((x) => x || '""').join(' → ') : '(none)');

/** Why a case disagrees, or undefined when it agrees. */
function compare(p: Predicted, o: Observed): string | undefined {
  const why: string[] = [];
  if (!!p.loaded !== !!o.loaded)
    why.push(
      `predicted ${p.loaded ? `loaded ${p.loaded.name}: ${chain(p.loaded.plugins)}` : 'no network'}, containerd ${o.loaded ? `loaded ${o.loaded.name}: ${chain(o.loaded.plugins)}` : `loaded none (${o.loadError})`}`,
    );
  else if (
    p.loaded &&
    o.loaded &&
    (p.loaded.name !== o.loaded.name || chain(p.loaded.plugins) !== chain(o.loaded.plugins))
  ) {
    why.push(
      `predicted ${p.loaded.name}: ${chain(p.loaded.plugins)}, containerd loaded ${o.loaded.name}: ${chain(o.loaded.plugins)}`,
    );
  } else if (!p.loaded && p.failingFile && !o.loadError?.includes(`/${p.failingFile}`)) {
    why.push(`predicted the load to fail on ${p.failingFile}, containerd: ${o.loadError}`);
  }
  if (chain(p.ran) !== chain(o.ran)) why.push(`predicted ADD to run ${chain(p.ran)}, it ran ${chain(o.ran)}`);
  if (p.starts !== !o.sandboxError)
    why.push(
      `predicted the sandbox to ${p.starts ? 'start' : 'fail'}, it ${o.sandboxError ? `failed: ${o.sandboxError.slice(0, 300)}` : 'started'}`,
    );
  return why.length ? why.join('; ') : undefined;
}

export async function runEmulationCheck(cluster: RealCluster): Promise<EmulationReport> {
  const t0 = performance.now();
  const { cases, total } = emulationCases();
  const rt = await startEmulationRuntime(cluster);
  const runtime = RUNTIMES[cluster.nodes[0]?.runtime ?? 'containerd-1.6'];
  const disagreements: string[] = [];
  let unsafe = 0;
  let meshRan = 0;
  try {
    writeSync(rt, 0);
    await waitSync(rt, 0);
    for (const [i, c] of cases.entries()) {
      try {
        layBins(rt, c);
        layFiles(rt, c);
        rmSync(join(rt.paths.cniConfDir, syncName(i)));
        const predicted = predict(await readSnapshot(rt.paths.cniConfDir, [rt.paths.cniBinDir]), runtime.line);
        const observed = await observe(rt, i, i);
        const mesh = !observed.sandboxError && observed.ran.indexOf(MESH_PLUGIN, 1) > 0;
        if (mesh) meshRan++;
        if (predicted.verdict.verified && !observed.sandboxError && !mesh) {
          unsafe++;
          disagreements.push(
            `${c.id} [${c.category}]: UNSAFE: verdict verified, but the sandbox started without ${MESH_PLUGIN} running after the first plugin (ran ${chain(observed.ran)})`,
          );
        }
        const why = compare(predicted, observed);
        if (why) disagreements.push(`${c.id} [${c.category}]: ${why}`);
      } catch (err) {
        disagreements.push(`${c.id} [${c.category}]: could not be compared: ${(err as Error).message}`);
      }
      writeSync(rt, i + 1);
      clearCaseFiles(rt, syncName(i + 1));
      await waitSync(rt, i + 1);
    }
  } finally {
    await rt.stop();
  }
  const agree = cases.length - new Set(disagreements.map((d) => d.split(' [')[0])).size;
  const secs = (performance.now() - t0) / 1000;
  const scope =
    cases.length === total
      ? `all ${total} cases`
      : `${cases.length} of ${total} cases (corpus, priority files and binaries in full, the other categories sampled; MESHGATE_REALNODE_EMULATION=all runs every one)`;
  const line =
    `emulation vs ${runtime.what}: ${agree}/${cases.length} agree on the loaded chain and the chain run; ` +
    `unsafe verdicts: ${unsafe}; sandboxes that ran ${MESH_PLUGIN} after the first plugin: ${meshRan} — ${scope}, ${secs.toFixed(0)} s`;
  const counts = new Map<string, number>();
  for (const d of disagreements) counts.set(causeOf(d), (counts.get(causeOf(d)) ?? 0) + 1);
  const causes = [...counts].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${n} × ${c}`);
  return { line, cases: cases.length, disagreements, causes };
}
