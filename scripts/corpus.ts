/**
 * Regenerates the real-workload corpus (issue 31 §3, test/corpus/): each source of test/corpus/sources.ts taken from
 * its git mirror at the pinned commit, rendered with the bootstrap's helm, every workload's pod injected by the real
 * Istio 1.27 injector (plain and PLATFORM=openshift) and the real Linkerd injector on a real kube-apiserver (server-side
 * dry run), and written to test/corpus/data/<id>/{istio,istio-openshift,linkerd}.yaml with a SOURCE file.
 *
 *   node scripts/corpus.ts                 # all sources (about 3 min warm: one control plane, three injectors)
 *   MESHGATE_CORPUS_MIRRORS=/srv/mirrors node scripts/corpus.ts
 *
 * Mirrors: `<dir>/<owner>+<name>/repo`, a clone of each repository (`git clone --bare https://github.com/<owner>/<name>
 * <dir>/<owner>+<name>/repo`), default /work/.mirror. Needs the bootstrap's builds (control plane with helm, Istio,
 * Linkerd): `node scripts/bootstrap.mjs test`. Runs in a network namespace of its own like every tier (issue 21).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { findControlPlaneBinaries, findIstioBinaries } from '../test/e2e/harness/index.ts';
import { injectAll } from '../test/corpus/inject.ts';
import { LINKERD_TRUST_ROOTS } from '../test/corpus/load.ts';
import { renderSource, workloadPods, type WorkloadPod } from '../test/corpus/render.ts';
import { CORPUS_MESHES, SOURCES } from '../test/corpus/sources.ts';
import { isolateThisRun } from '../test/support/isolation.ts';

await isolateThisRun('corpus');

const DATA = join(import.meta.dirname, '../test/corpus/data');
const say = (s: string) => process.stdout.write(`${s}\n`);

/** What changes on every run and says nothing about the pod: left out so a regeneration diffs only real changes. */
function stable(p: V1Pod): Record<string, unknown> {
  const { uid: _u, creationTimestamp: _c, managedFields: _m, resourceVersion: _r, ...metadata } = p.metadata ?? {};
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: p.spec };
}

const only = process.argv.slice(2);
const sources = only.length ? SOURCES.filter((s) => only.includes(s.id)) : SOURCES;
const bySource = new Map<string, WorkloadPod[]>();
for (const s of sources) {
  const pods = workloadPods(renderSource(s)).map((p) => ({ ...p, ...(s.meshes ? { meshes: s.meshes } : {}) }));
  if (pods.length === 0) throw new Error(`${s.id}: no workloads rendered`);
  bySource.set(s.id, pods);
  say(`[corpus] ${s.id}: ${pods.length} workloads (${pods.map((p) => p.workload).join(', ')})`);
}
const all = [...bySource.values()].flat();
say(`[corpus] injecting ${all.length} pods with Istio, Istio for OpenShift and Linkerd…`);
const { pods: injected, linkerdTrustRoots } = await injectAll(all);
// The Linkerd install's trust anchor (a public certificate): the corpus test configures it as meshgate learns it.
writeFileSync(LINKERD_TRUST_ROOTS, linkerdTrustRoots);

const istio = findIstioBinaries().manifest;
const cp = findControlPlaneBinaries().manifest;
let at = 0;
for (const s of sources) {
  const pods = bySource.get(s.id) ?? [];
  const dir = join(DATA, s.id);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const mesh of s.meshes ?? CORPUS_MESHES) {
    const docs = pods.map((p, i) => {
      const pod = injected[mesh][at + i];
      if (!pod) throw new Error(`${s.id} ${p.workload}: not injected by ${mesh}`);
      return `# workload: ${p.workload}\n${stringify(stable(pod))}`;
    });
    writeFileSync(join(dir, `${mesh}.yaml`), docs.join('---\n'));
  }
  at += pods.length;
  const source = [
    `repository: github.com/${s.repo}`,
    ...(s.tag ? [`tag: ${s.tag}`] : []),
    `commit: ${s.commit}`,
    `paths: ${s.paths.join(', ')}`,
    ...(s.dependencies ?? []).map((d) => `dependency: ${d.name} from github.com/${d.repo} ${d.commit} ${d.path}`),
    ...(s.values ? [`values: ${JSON.stringify(s.values)}`] : []),
    `what: ${s.title}`,
    `rendered: ${s.kind === 'chart' ? `helm template (helm ${cp.helmVersion}, --kube-version 1.34.0)` : 'as published'}`,
    `injected: ${(s.meshes ?? CORPUS_MESHES).join(', ')} — Istio ${istio.istioRelease} (${istio.istioModuleVersion}) ` +
      'injector, plain and PLATFORM=openshift; Linkerd proxy injector (shared/vendor/linkerd2); ' +
      `on kube-apiserver ${cp.kubernetesVersion} (dry-run create)`,
    'regenerate: node scripts/corpus.ts',
    `workloads: ${pods.map((p) => p.workload).join(', ')}`,
    '',
  ];
  writeFileSync(join(dir, 'SOURCE'), source.join('\n'));
}
say(`[corpus] wrote ${sources.length} sources to ${DATA}`);
process.exit(0);
