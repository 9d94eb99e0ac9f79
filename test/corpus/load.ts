/**
 * Reads the corpus' test data (test/corpus/data/<id>/<mesh>.yaml, written by scripts/corpus.ts): each document a pod
 * as the mesh's injector left it, preceded by the comment naming its workload.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CORPUS_MESHES, type CorpusMesh, SOURCES } from './sources.ts';

export const DATA_DIR = join(import.meta.dirname, 'data');
/**
 * The trust anchor (a public certificate) of the Linkerd install that injected the corpus, as its
 * linkerd-identity-trust-roots ConfigMap held it: meshgate learns it from there (src/kube/learned-control-plane.ts).
 */
export const LINKERD_TRUST_ROOTS = join(DATA_DIR, 'linkerd-trust-roots.crt');

export interface CorpusPod {
  source: string;
  mesh: CorpusMesh;
  /** `Deployment/argocd-server`. */
  workload: string;
  pod: Record<string, unknown>;
}

export function loadCorpus(): CorpusPod[] {
  const out: CorpusPod[] = [];
  for (const s of SOURCES) {
    for (const mesh of s.meshes ?? CORPUS_MESHES) {
      const file = join(DATA_DIR, s.id, `${mesh}.yaml`);
      if (!existsSync(file)) throw new Error(`${file} is missing: run node scripts/corpus.ts`);
      // scripts/corpus.ts writes each document as `# workload: KIND/NAME`, then the pod, documents split by `---`.
      for (const text of readFileSync(file, 'utf8').split(/^---\n/m)) {
        const workload = /^# workload: (\S+)\n/.exec(text)?.[1];
        if (!workload) throw new Error(`${file}: a document without its "# workload:" comment`);
        out.push({ source: s.id, mesh, workload, pod: parse(text) as Record<string, unknown> });
      }
    }
  }
  return out;
}
