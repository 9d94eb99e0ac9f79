// The chart's defaults for the parts the tier runs as processes: the node agent's and the repair controller's flags
// come from charts/meshgate/values.yaml (read at run time, not copied), so the tier tests what `helm install`
// would run; when a default changes there, the tier follows. Only the values that change behaviour here are read;
// paths and runtime come from each real node (harness/agent.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../e2e/harness/binaries.ts';

export interface ChartDefaults {
  /** Node agent flags (templates/node-agent-daemonset.yaml): --resync, and --taint-unverified when nodeAgent.taintUnverified. */
  agentArgs: string[];
  /** Repair controller flags: --max-deletes-per-minute from repairController.maxDeletesPerMinute. */
  repairArgs: string[];
  taintUnverified: boolean;
  /**
   * nodeAgent.proxyGuard: the agent's guard of who runs as the proxy (--proxy-guard, --proxy-guard-interval); the
   * guard reads meshgate's config, which the chart always passes (--config).
   */
  proxyGuard: { enabled: boolean; interval: string };
  /** webhook.{mutating,validating}.failurePolicy: how meshgate's webhooks are registered outside S4 and S5. */
  webhook: { mutating: 'Fail' | 'Ignore'; validating: 'Fail' | 'Ignore' };
}

export function chartDefaults(root = repoRoot): ChartDefaults {
  const file = join(root, 'charts/meshgate/values.yaml');
  let values: {
    nodeAgent?: { taintUnverified?: unknown; resync?: unknown; proxyGuard?: { enabled?: unknown; interval?: unknown } };
    repairController?: { maxDeletesPerMinute?: unknown };
    webhook?: { mutating?: { failurePolicy?: unknown }; validating?: { failurePolicy?: unknown } };
  };
  try {
    values = parse(readFileSync(file, 'utf8')) as typeof values;
  } catch (err) {
    throw new Error(`${file}: cannot read the chart's defaults: ${(err as Error).message}`, { cause: err });
  }
  const taint = values.nodeAgent?.taintUnverified;
  const resync = values.nodeAgent?.resync;
  const deletes = values.repairController?.maxDeletesPerMinute;
  if (typeof taint !== 'boolean')
    throw new Error(`${file}: nodeAgent.taintUnverified is ${JSON.stringify(taint)}, expected true or false`);
  if (typeof resync !== 'string')
    throw new Error(`${file}: nodeAgent.resync is ${JSON.stringify(resync)}, expected a duration`);
  const guard = values.nodeAgent?.proxyGuard;
  if (typeof guard?.enabled !== 'boolean' || typeof guard.interval !== 'string')
    throw new Error(`${file}: nodeAgent.proxyGuard is ${JSON.stringify(guard)}, expected {enabled, interval}`);
  if (!Number.isInteger(deletes))
    throw new Error(`${file}: repairController.maxDeletesPerMinute is ${JSON.stringify(deletes)}, expected an integer`);
  const policy = (which: 'mutating' | 'validating') => {
    const p = values.webhook?.[which]?.failurePolicy;
    if (p !== 'Fail' && p !== 'Ignore')
      throw new Error(`${file}: webhook.${which}.failurePolicy is ${JSON.stringify(p)}, expected Fail or Ignore`);
    return p;
  };
  return {
    webhook: { mutating: policy('mutating'), validating: policy('validating') },
    agentArgs: [
      `--resync=${resync}`,
      ...(taint ? ['--taint-unverified'] : []),
      ...(guard.enabled ? ['--proxy-guard', `--proxy-guard-interval=${guard.interval}`] : []),
    ],
    repairArgs: [`--max-deletes-per-minute=${deletes}`],
    taintUnverified: taint,
    proxyGuard: { enabled: guard.enabled, interval: guard.interval },
  };
}
