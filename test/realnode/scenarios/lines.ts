// Which (mesh, runtime) lines `npm run scenarios` runs, each on a cluster of its own, and the one table that puts
// every scenario of every line side by side at the end. The default keeps `npm test` within its budget (~14 min for
// the four lines; one line was ~5.5 min): the full matrix on Istio + containerd 1.6 (with S9 and the emulation check),
// S1–S11 and S13 on Linkerd + containerd 1.6 (S9 with Linkerd's proxy UID 2102), and the chain scenarios S1–S3 on
// containerd 2.4.2 for both meshes, with the emulation check once (what changes with the runtime is how it selects
// and reloads the conf dir), S9 on Istio + 2.4.2 (who can become the proxy is decided by the runtime there:
// meshgate's NRI plugin, and how it names capabilities), and Istio's ambient mode on containerd 1.6 (A1–A4 of
// issue 26: the real istio-cni node agent and ztunnel on rn-1, harness/ambient.ts).
// MESHGATE_REALNODE_LINES=linkerd/containerd-2.4,istio/containerd-1.6 picks lines (each with its scenarios here);
// MESHGATE_REALNODE_ONLY still filters scenarios within every line.
import type { TierMesh } from '../harness/cni.ts';
import type { TierRuntime } from '../harness/containerd2.ts';
import type { ScenarioResult } from './common.ts';
import { printTable, resultRow } from './matrix.ts';

export interface Line {
  mesh: TierMesh;
  runtime: TierRuntime;
  /** Istio in ambient mode (mesh istio): the line `istio-ambient/…`, its scenarios A1–A4. */
  ambient: boolean;
  /** Scenario ids (and EMU) this line runs unless MESHGATE_REALNODE_ONLY says otherwise. */
  scenarios: readonly string[];
}

const ALL = ['S1', 'S2', 'S3', 'S10', 'S11', 'S13', 'S4', 'S5', 'S6', 'S7', 'S8', 'S9', 'EMU'];
const DEFAULT_SCENARIOS: Record<string, readonly string[]> = {
  'istio/containerd-1.6': ALL,
  // S9 with Linkerd's proxy UID 2102 (the guard stops it there: containerd 1.6 has no NRI).
  'linkerd/containerd-1.6': ['S1', 'S2', 'S3', 'S10', 'S11', 'S13', 'S4', 'S5', 'S6', 'S7', 'S9', 'S8'],
  // S9 on 2.4 too: who can become the proxy depends on the runtime (NRI, capability names; issue 31 §2, 33 §5).
  'istio/containerd-2.4': ['S1', 'S2', 'S3', 'S9', 'EMU'],
  'linkerd/containerd-2.4': ['S1', 'S2', 'S3'],
  // Istio ambient (issue 26): istio-cni's node agent and ztunnel on rn-1 only (harness/ambient.ts says why).
  'istio-ambient/containerd-1.6': ['A4', 'A1', 'A3', 'A2', 'A2C', 'A5'],
  // Issue 33 §6: a guarded ambient namespace relabelled out of ambient, on the other runtime too (A5 alone: the
  // chain scenarios' runtime differences are the sidecar 2.4 line's).
  'istio-ambient/containerd-2.4': ['A5'],
};

export const lineName = (l: Pick<Line, 'mesh' | 'runtime' | 'ambient'>) =>
  `${l.mesh}${l.ambient ? '-ambient' : ''}/${l.runtime}`;

/** What runs without MESHGATE_REALNODE_LINES: all six. */
const DEFAULT_LINES = Object.keys(DEFAULT_SCENARIOS);

/** The lines to run: MESHGATE_REALNODE_LINES (comma-separated mesh/runtime), or the default ones. */
export function chosenLines(env: string | undefined): Line[] {
  const names = env?.trim() ? env.split(',').map((s) => s.trim()) : DEFAULT_LINES;
  return names.map((name) => {
    const scenarios = DEFAULT_SCENARIOS[name];
    if (!scenarios)
      throw new Error(`MESHGATE_REALNODE_LINES: "${name}" is not one of ${Object.keys(DEFAULT_SCENARIOS).join(', ')}`);
    const [meshPart, runtime] = name.split('/') as [string, TierRuntime];
    const ambient = meshPart === 'istio-ambient';
    return { mesh: (ambient ? 'istio' : meshPart) as TierMesh, runtime, ambient, scenarios };
  });
}

/** One row per scenario × line, every line's results together. */
export function printLines(results: { line: Line; results: ScenarioResult[] }[]): void {
  const rows = [['', 'mesh/runtime', 'created', 'Running', 'unredirected', 'right again after', 'took', 'result']];
  for (const { line, results: rs } of results) for (const r of rs) rows.push(resultRow(r, lineName(line)));
  console.log('\nall lines:');
  printTable(rows);
}
