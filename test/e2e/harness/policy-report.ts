/**
 * The wg-policy PolicyReport CRDs as Kyverno ships them (scripts/build-policyreport.sh: config/crds/policyreport of
 * the github.com/kyverno/kyverno module test/kyverno/go.mod pins), found in the build cache by the script's key.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildCacheKey, finishedBuild } from '../../support/build-cache.ts';

const INPUTS = ['test/kyverno/go.mod', 'scripts/build-policyreport.sh'];

export const policyReportCacheKey = (): string => buildCacheKey(INPUTS);

/** The CRD files (policyreports, clusterpolicyreports), absolute paths. */
export function policyReportCrds(): string[] {
  const dir = finishedBuild('policyreport', INPUTS, 'scripts/build-policyreport.sh', 'seconds: a module download');
  const crds = join(dir, 'crds');
  return readdirSync(crds)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(crds, f));
}
