/** Judges the repair controller Deployment: optional in the chart (repairController.enabled), so absence warns. */
import { isReadError, type Read, type WorkloadStatus } from './facts.ts';
import { result, type CheckResult } from './report.ts';

export function judgeRepairController(d: Read<WorkloadStatus>, name: string): CheckResult {
  const code = 'repair_controller_ready';
  if (d === undefined)
    return result(
      code,
      'warn',
      `Deployment ${name} does not exist: pods whose redirect validation failed are not recreated`,
    );
  if (isReadError(d)) return result(code, 'warn', `Deployment ${name} could not be read: ${d.error}`);
  const what = `Deployment ${d.namespace}/${d.name}`;
  if (d.desired === 0) return result(code, 'warn', `${what} is scaled to 0`);
  if (d.ready === 0) return result(code, 'fail', `${what}: no replica ready of ${d.desired}`);
  return result(code, 'ok', `${what}: ${d.ready} of ${d.desired} replicas ready (one acts, by leader election)`);
}
