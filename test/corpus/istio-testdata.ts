/**
 * Istio 1.27's own injector test outputs (pkg/kube/inject/testdata/inject/*.yaml.injected of the istio.io/istio
 * module test/istio/go.mod pins, read from the Go module cache the bootstrap's Istio build fills — not copied into
 * this repository): every pod template in them, as its golden test expects istiod to inject it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { podTemplates } from '../../src/manifests/workloads.ts';
import { repoRoot } from '../support/build-cache.ts';

/** The module version test/istio/go.mod requires. */
function istioModuleVersion(): string {
  const mod = readFileSync(join(repoRoot, 'test/istio/go.mod'), 'utf8');
  const v = /^require istio\.io\/istio (\S+)/m.exec(mod)?.[1];
  if (!v) throw new Error('test/istio/go.mod requires no istio.io/istio');
  return v;
}

export function istioTestdataDir(): string {
  const cache = process.env.GOMODCACHE || execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const dir = join(cache, `istio.io/istio@${istioModuleVersion()}`, 'pkg/kube/inject/testdata/inject');
  if (!existsSync(dir)) throw new Error(`${dir} is missing: run bash scripts/build-istio.sh (it downloads the module)`);
  return dir;
}

export interface TestdataPod {
  /** `hello.yaml.injected#0`: the file and the template's index in it. */
  name: string;
  namespace: string;
  pod: Record<string, unknown>;
}

export function istioTestdataPods(dir = istioTestdataDir()): TestdataPod[] {
  const out: TestdataPod[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.injected'))
    .sort()) {
    let i = 0;
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const value = doc.toJS() as Record<string, unknown> | null;
      if (!value || typeof value.kind !== 'string') continue;
      for (const t of podTemplates(value)) {
        out.push({
          name: `${file}#${i++}`,
          namespace: t.namespace ?? 'default',
          pod: { apiVersion: 'v1', kind: 'Pod', metadata: t.template.metadata ?? {}, spec: t.template.spec },
        });
      }
    }
  }
  return out;
}
