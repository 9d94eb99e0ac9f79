/**
 * Istio's own istio-cni chart (manifests/charts/istio-cni of the istio.io/istio module scripts/build-istio.sh built
 * from, in the Go module cache), rendered with the control plane's helm: its ConfigMap istio-cni-config is what
 * istio-cni's node agent enrols ambient pods by, and what meshgate's webhook learns them from (src/policy/ambient/learn.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { helmWithValues, parseManifests, type Obj } from '../chart/helm.ts';
import { findIstioBinaries } from '../e2e/harness/istio.ts';

export function istioCniChart(): string {
  const { manifest } = findIstioBinaries();
  const cache = execFileSync('go', ['env', 'GOMODCACHE'], {
    encoding: 'utf8',
    env: { ...process.env, GOTOOLCHAIN: 'local' },
  }).trim();
  const dir = join(cache, 'istio.io', `istio@${manifest.istioModuleVersion}`, 'manifests', 'charts', 'istio-cni');
  if (!existsSync(join(dir, 'Chart.yaml')))
    throw new Error(
      `Istio's istio-cni chart is not at ${dir}: run \`bash scripts/build-istio.sh\` (it downloads the module)`,
    );
  return dir;
}

/** The data of istio-cni-config as the chart renders it with `values` (e.g. { ambient: { enabled: true } }). */
export async function istioCniConfigData(values: Obj): Promise<Record<string, string>> {
  const res = await helmWithValues(['template', 'istio-cni', istioCniChart(), '--namespace', 'istio-system'], values);
  if (res.code !== 0) throw new Error(`helm template of istio-cni failed (exit ${res.code}):\n${res.stderr}`);
  return parseManifests(res.stdout).one('ConfigMap', 'istio-cni-config').data as Record<string, string>;
}
