/**
 * Reads the corpus' test data (test/corpus/data/<id>/<mesh>.yaml, written by scripts/corpus.ts): each document a pod
 * as the mesh's injector left it, preceded by the comment naming its workload.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CORPUS_MESHES, type CorpusMesh, SOURCES } from './sources.ts';

export const DATA_DIR = join(import.meta.dirname, 'data');

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
    for (const mesh of CORPUS_MESHES) {
      const file = join(DATA_DIR, s.id, `${mesh}.yaml`);
      if (!existsSync(file)) throw new Error(`${file} is missing: run node scripts/corpus.ts`);
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
        const workload = /workload: (\S+)/.exec(doc.commentBefore ?? '')?.[1];
        if (!workload) throw new Error(`${file}: a document without its "# workload:" comment`);
        out.push({ source: s.id, mesh, workload, pod: doc.toJS() as Record<string, unknown> });
      }
    }
  }
  return out;
}
