// Renders charts/meshgate with the real helm binary that scripts/build-controlplane.sh built (found through the
// e2e harness, the same lookup every test uses) and returns the manifests as plain objects to assert on.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { findControlPlaneBinaries, repoRoot } from '../e2e/harness/binaries.ts';
import { runTool, type RunResult } from '../e2e/harness/net.ts';

export const chartDir = join(repoRoot, 'charts', 'meshgate');

/** Kubernetes version the chart is rendered for: the release the e2e control plane runs. */
export const KUBE_VERSION = '1.34.0';

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are read field by field in tests; a wrong path fails the expectation
export type Obj = Record<string, any>;

export interface Rendered {
  docs: Obj[];
  /** The one object of this kind (and name, when given); throws when there is not exactly one. */
  one(kind: string, name?: string): Obj;
  all(kind: string): Obj[];
}

export function helm(args: string[], input?: string): Promise<RunResult> {
  return runTool(findControlPlaneBinaries().bin('helm'), args, {
    input,
    timeoutMs: 60_000,
    // No repositories, plugins or caches of the person running the tests.
    env: {
      ...process.env,
      HELM_CACHE_HOME: join(tmpdir(), 'meshgate-helm-cache'),
      HELM_CONFIG_HOME: join(tmpdir(), 'meshgate-helm-config'),
    },
  });
}

/** Runs helm with a values file holding `values` (helm cannot read values from stdin). */
export async function helmWithValues(args: string[], values: Obj = {}): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'meshgate-values-'));
  try {
    const file = join(dir, 'values.yaml');
    writeFileSync(file, JSON.stringify(values));
    return await helm([...args, '--values', file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
}

/** `helm template`; rejects with helm's stderr when rendering fails. */
export async function render(values: Obj = {}, o: RenderOptions = {}): Promise<Rendered> {
  const res = await helmWithValues(templateArgs(o), values);
  if (res.code !== 0) throw new Error(`helm template failed (exit ${res.code}):\n${res.stderr}`);
  return parseManifests(res.stdout);
}

export function templateArgs(o: RenderOptions = {}): string[] {
  return [
    'template',
    o.release ?? 'meshgate',
    chartDir,
    '--namespace',
    o.namespace ?? 'meshgate',
    '--kube-version',
    KUBE_VERSION,
  ];
}

/** Key `key` of the one rendered ConfigMap `name`; throws naming what is missing. */
export function configMapData(r: Rendered, name: string, key: string): string {
  const v = r.one('ConfigMap', name).data?.[key];
  if (typeof v !== 'string') throw new Error(`rendered ConfigMap ${name} has no data.${key}`);
  return v;
}

export function parseManifests(text: string): Rendered {
  const docs = parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`helm rendered invalid YAML: ${d.errors[0].message}`);
      return d.toJS() as Obj | null;
    })
    .filter((d): d is Obj => d !== null);
  const all = (kind: string) => docs.filter((d) => d.kind === kind);
  const one = (kind: string, name?: string) => {
    const hits = all(kind).filter((d) => name === undefined || d.metadata?.name === name);
    if (hits.length !== 1) {
      throw new Error(
        `expected one ${kind}${name ? ` ${name}` : ''}, found ${hits.length}: ${docs.map((d) => `${d.kind}/${d.metadata?.name}`).join(', ')}`,
      );
    }
    return hits[0];
  };
  return { docs, one, all };
}

/**
 * A parent chart (in a new temporary dir, the caller removes it) with meshgate as a file:// dependency, copied under
 * charts/ as `helm dependency build` copies it, and `values` (global included) as its values.yaml.
 */
export function parentChart(values: Obj): string {
  const dir = mkdtempSync(join(tmpdir(), 'meshgate-parent-'));
  const version = (parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { version: string }).version;
  mkdirSync(join(dir, 'charts'));
  cpSync(chartDir, join(dir, 'charts', 'meshgate'), { recursive: true });
  writeFileSync(
    join(dir, 'Chart.yaml'),
    `apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n  - name: meshgate\n    version: "${version}"\n    repository: file://${chartDir}\n`,
  );
  writeFileSync(join(dir, 'values.yaml'), JSON.stringify(values));
  return dir;
}
