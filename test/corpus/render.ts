/**
 * From a corpus source (test/corpus/sources.ts) to the pods its workloads would create: the source's files taken
 * from a git mirror at the pinned commit (`git archive`, into a temp dir: nothing is copied into the repository),
 * charts rendered with the bootstrap's helm (their dependencies laid into charts/ from their own repositories, as
 * `helm dependency build` would), and each pod template made into the Pod its controller would create — owner
 * reference, a StatefulSet's claims, a DaemonSet's node pin — so the injectors see what they see in a cluster.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { podTemplates } from '../../src/manifests/workloads.ts';
import { findControlPlaneBinaries } from '../e2e/harness/binaries.ts';
import type { ChartDependency, CorpusMesh, CorpusSource } from './sources.ts';

/** Where the git mirrors are: `<dir>/<owner>+<name>/repo` (a bare or normal clone of each repository). */
export const MIRRORS = process.env.MESHGATE_CORPUS_MIRRORS ?? '/work/.mirror';

/** The node a DaemonSet's pod is pinned to, and the release namespace charts are rendered for. */
export const CORPUS_NODE = 'corpus-node';
export const RELEASE_NAMESPACE = 'corpus';

/** A workload's pod, before any injector saw it. */
export interface WorkloadPod {
  /** `Deployment/argocd-server`: how tests and the table name it. */
  workload: string;
  pod: Record<string, unknown>;
  /** The meshes that inject it (its source's), when not all. */
  meshes?: readonly CorpusMesh[];
}

function gitDir(repo: string): string {
  const dir = join(MIRRORS, repo.replace('/', '+'), 'repo');
  if (!existsSync(dir))
    throw new Error(
      `no mirror of ${repo} at ${dir}: clone it there (git clone --bare https://github.com/${repo} ${dir}) ` +
        'or set MESHGATE_CORPUS_MIRRORS',
    );
  return dir;
}

/** Extracts `path` of `repo` at `commit` into `into` (the tree keeps its path below `into`). */
function extract(repo: string, commit: string, path: string, into: string): string {
  // stderr piped: a snapshot may lack large blobs elsewhere in the tree, which git names while archiving `path`.
  const tar = execFileSync('git', ['--git-dir', gitDir(repo), 'archive', '--format=tar', commit, path], {
    maxBuffer: 512 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  mkdirSync(into, { recursive: true });
  execFileSync('tar', ['-x', '-C', into], { input: tar });
  return join(into, path);
}

function helm(args: string[]): string {
  const bin = findControlPlaneBinaries().bin('helm');
  const home = mkdtempSync(join(tmpdir(), 'corpus-helm-'));
  try {
    return execFileSync(bin, args, {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      env: { ...process.env, HELM_CACHE_HOME: home, HELM_CONFIG_HOME: home, HELM_DATA_HOME: home },
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function placeDependency(chartDir: string, dep: ChartDependency, work: string): void {
  const src = extract(dep.repo, dep.commit, dep.path, join(work, `dep-${dep.name}`));
  const dest = join(chartDir, 'charts', dep.name);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(join(chartDir, 'charts'), { recursive: true });
  cpSync(src, dest, { recursive: true });
}

/** The source's rendered manifests (YAML text). */
export function renderSource(s: CorpusSource): string {
  const work = mkdtempSync(join(tmpdir(), `corpus-${s.id}-`));
  try {
    if (s.kind === 'manifest')
      return s.paths.map((p) => readFileSync(extract(s.repo, s.commit, p, work), 'utf8')).join('\n---\n');
    const chart = extract(s.repo, s.commit, s.paths[0], work);
    for (const dep of s.dependencies ?? []) placeDependency(chart, dep, work);
    if (s.stampVersion) {
      const file = join(chart, 'Chart.yaml');
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace(/^(version|appVersion): v0\.0\.0$/gm, `$1: ${s.stampVersion}`),
      );
    }
    const values = join(work, 'values.yaml');
    writeFileSync(values, stringify(s.values ?? {}));
    return helm(['template', s.id, chart, '--namespace', RELEASE_NAMESPACE, '--kube-version', '1.34.0', '-f', values]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A stable, valid UID for an owner reference (the objects do not exist; the injectors read kind and name). */
const uidOf = (s: string) => {
  const h = createHash('sha256').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};
const hashOf = (s: string, n: number) =>
  [...createHash('sha256').update(s).digest()]
    .map((b) => 'bcdfghjklmnpqrstvwxz2456789'[b % 27])
    .join('')
    .slice(0, n);

type Obj = Record<string, unknown>;

/** The Pod a controller creates from the workload's template. */
function podOf(doc: Obj, kind: string, name: string, template: Obj): WorkloadPod {
  const meta = (template.metadata ?? {}) as Obj;
  const spec = structuredClone((template.spec ?? {}) as Obj);
  let owner: { kind: string; apiVersion: string; name: string };
  let podName: string;
  switch (kind) {
    case 'Deployment': {
      const rs = `${name}-${hashOf(name, 10)}`;
      owner = { kind: 'ReplicaSet', apiVersion: 'apps/v1', name: rs };
      podName = `${rs}-${hashOf(rs, 5)}`;
      break;
    }
    case 'StatefulSet': {
      owner = { kind, apiVersion: 'apps/v1', name };
      podName = `${name}-0`;
      const claims = ((doc.spec as Obj)?.volumeClaimTemplates ?? []) as Obj[];
      const volumes = (spec.volumes ?? []) as Obj[];
      for (const c of claims) {
        const claim = (c.metadata as Obj)?.name as string;
        if (!volumes.some((v) => v.name === claim))
          volumes.push({ name: claim, persistentVolumeClaim: { claimName: `${claim}-${podName}` } });
      }
      if (volumes.length) spec.volumes = volumes;
      break;
    }
    case 'DaemonSet':
      owner = { kind, apiVersion: 'apps/v1', name };
      podName = `${name}-${hashOf(name, 5)}`;
      // The DaemonSet controller pins each pod to its node by a required node affinity on metadata.name.
      spec.affinity = {
        ...((spec.affinity as Obj | undefined) ?? {}),
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [CORPUS_NODE] }] }],
          },
        },
      };
      break;
    case 'CronJob': {
      const job = `${name}-29000000`;
      owner = { kind: 'Job', apiVersion: 'batch/v1', name: job };
      podName = `${job}-${hashOf(job, 5)}`;
      break;
    }
    case 'Pod': {
      const { namespace: _ns, ...own } = meta;
      return { workload: `Pod/${name}`, pod: { apiVersion: 'v1', kind: 'Pod', metadata: { ...own, name }, spec } };
    }
    default:
      owner = { kind, apiVersion: (doc.apiVersion as string) ?? 'apps/v1', name };
      podName = `${name}-${hashOf(name, 5)}`;
  }
  return {
    workload: `${kind}/${name}`,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ...meta,
        name: podName,
        ownerReferences: [{ ...owner, uid: uidOf(`${owner.kind}/${owner.name}`), controller: true }],
      },
      spec,
    },
  };
}

/** Every workload's pod in the rendered manifests, in document order. */
export function workloadPods(rendered: string): WorkloadPod[] {
  const out: WorkloadPod[] = [];
  // YAML 1.1, as the apiserver's and helm's parsers read it: Bitnami's `defaultMode: 0755` is octal there.
  for (const d of parseAllDocuments(rendered, { version: '1.1' })) {
    const doc = d.toJS() as Obj | null;
    if (!doc || typeof doc.kind !== 'string') continue;
    for (const t of podTemplates(doc)) out.push(podOf(doc, t.kind, t.name, t.template as Obj));
  }
  return out;
}
