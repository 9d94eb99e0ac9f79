/**
 * Every scripts/build-*.sh names its cache dir by the hash of its inputs and the shared preamble
 * (scripts/lib/build-common.sh); the tests find the same dirs through test/support/build-cache.ts. If the two
 * disagreed, a test would run binaries built from another tree, or fail to find a fresh build: each script's
 * `--print-dir` (which builds nothing) must print the dir its TypeScript finder computes.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kyvernoDir } from '../../bench/peers/kyverno.ts';
import { multusCacheKey } from '../cni/multus-oracle.ts';
import { ocicniCacheKey, oracleCacheKey } from '../cni/oracle-binary.ts';
import { controlPlaneCacheKey } from '../e2e/harness/binaries.ts';
import { certManagerCacheKey } from '../e2e/harness/cert-manager.ts';
import { istioCacheKey } from '../e2e/harness/istio.ts';
import { policyReportCacheKey } from '../e2e/harness/policy-report.ts';
import { toolsCacheKey } from '../monitoring/tools.ts';
import { realNodeCacheKey } from '../realnode/harness/binaries.ts';
import { craneCacheKey } from '../release/crane.ts';
import { cacheRoot, repoRoot } from '../support/build-cache.ts';
import { meshBuildDir } from './binaries.ts';

const expected: Record<string, () => string> = {
  controlplane: () => join(cacheRoot(), `controlplane-${controlPlaneCacheKey()}`),
  'cni-oracle': () => join(cacheRoot(), `cni-oracle-${oracleCacheKey()}`),
  'ocicni-oracle': () => join(cacheRoot(), `ocicni-oracle-${ocicniCacheKey()}`),
  'multus-oracle': () => join(cacheRoot(), `multus-oracle-${multusCacheKey()}`),
  'cert-manager': () => join(cacheRoot(), `cert-manager-${certManagerCacheKey()}`),
  istio: () => join(cacheRoot(), `istio-${istioCacheKey()}`),
  realnode: () => join(cacheRoot(), `realnode-${realNodeCacheKey()}`),
  promtool: () => join(cacheRoot(), `promtool-${toolsCacheKey()}`),
  crane: () => join(cacheRoot(), `crane-${craneCacheKey()}`),
  kyverno: kyvernoDir,
  linkerd: () => meshBuildDir('linkerd'),
  'linkerd-validator': () => meshBuildDir('linkerd-validator'),
  containerd: () => meshBuildDir('containerd'),
  ztunnel: () => meshBuildDir('ztunnel'),
  policyreport: () => join(cacheRoot(), `policyreport-${policyReportCacheKey()}`),
};

const scripts = readdirSync(join(repoRoot, 'scripts'))
  .map((f) => /^build-(.+)\.sh$/.exec(f)?.[1])
  .filter((p): p is string => p !== undefined)
  .sort();

describe('build cache keys', () => {
  it('every build script has a finder here', () => {
    expect(scripts).toEqual(Object.keys(expected).sort());
  });

  it.each(scripts)('scripts/build-%s.sh --print-dir is the dir the tests look in', (part) => {
    const res = spawnSync('bash', [join(repoRoot, 'scripts', `build-${part}.sh`), '--print-dir'], { encoding: 'utf8' });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(expected[part]?.());
  });
});
