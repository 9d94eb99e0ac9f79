/**
 * The steps of `meshgate uninstall` about what meshgate leaves outside its own objects (docs/security.md,
 * "Uninstalling: what is left, and a reinstall"): its PolicyReports (deleted), the namespaces' enforcement levels
 * (kept and named with the command that removes them, or removed when asked), the pods' would-deny records (named).
 */
import { WOULD_DENY_LABEL } from '../admission/level.ts';
import { ENFORCEMENT_LABEL } from '../contract/names.ts';
import { describeKubeError } from '../kube/errors.ts';
import type { UninstallApi } from './kube-api.ts';
import { POLICY_GRACE_MS, sleeper, Stop, type UninstallOptions } from './options.ts';
import { MADE_BY_MESHGATE } from './plan.ts';

/** meshgate's PolicyReports of audit findings (src/repair/reports/report.ts: named meshgate, its label). */
export async function deleteReports(api: UninstallApi, o: UninstallOptions): Promise<number> {
  let changed = 0;
  for (const r of await api.policyReports(`${MADE_BY_MESHGATE.key}=${MADE_BY_MESHGATE.value}`)) {
    const { namespace, name, uid } = r.metadata ?? {};
    if (!namespace || name !== 'meshgate') continue;
    if (!o.dryRun) await api.deletePolicyReport(namespace, name, uid);
    changed++;
    o.out(`  PolicyReport ${namespace}/${name}: ${o.dryRun ? 'would delete' : 'deleted'} (meshgate's audit findings)`);
  }
  return changed;
}

/**
 * The namespaces' levels: removed with removeEnforcementLabels (retried while the deleted enforcement policy still
 * refuses lowering, as for Nodes), else listed as kept.
 */
export async function enforcementLabels(
  api: UninstallApi,
  o: UninstallOptions,
): Promise<{ removed: number; kept: Array<{ name: string; value: string }> }> {
  const labelled = await api.labelledNamespaces(ENFORCEMENT_LABEL);
  if (!o.removeEnforcementLabels) return { removed: 0, kept: labelled };
  const now = o.now ?? Date.now;
  for (const ns of labelled) {
    const deadline = now() + POLICY_GRACE_MS;
    for (;;) {
      try {
        if (!o.dryRun) await api.removeNamespaceLabel(ns.name, ENFORCEMENT_LABEL);
        break;
      } catch (err) {
        const why = describeKubeError(err);
        if (!why.includes('ValidatingAdmissionPolicy') || now() >= deadline)
          throw new Stop(`namespace ${ns.name}: ${why}`);
        await (o.sleep ?? sleeper)(o.pollMs);
      }
    }
    o.out(`  namespace ${ns.name}: ${o.dryRun ? 'would remove' : 'removed'} label ${ENFORCEMENT_LABEL}=${ns.value}`);
  }
  return { removed: labelled.length, kept: [] };
}

/** What uninstall leaves, each with why and how to remove it: the levels kept, the pods' records. */
export async function keptRecords(
  api: UninstallApi,
  levels: Array<{ name: string; value: string }>,
): Promise<string[]> {
  const out: string[] = [];
  if (levels.length > 0) {
    const names = levels.map((l) => l.name);
    out.push(
      `kept: label ${ENFORCEMENT_LABEL} on ${levels.length} namespace(s) (${levels.map((l) => `${l.name}=${l.value}`).join(', ')}): ` +
        'the levels your admins set; a reinstall starts these namespaces at them, not at the default. To start over ' +
        `at the default: kubectl label namespace ${names.join(' ')} ${ENFORCEMENT_LABEL}- ` +
        '(or uninstall with --remove-enforcement-labels; the chart: uninstall.removeEnforcementLabels=true)',
    );
  }
  const records = await api.countPods(WOULD_DENY_LABEL);
  if (records > 0)
    out.push(
      `kept: label and annotation ${WOULD_DENY_LABEL} on ${records} pod(s) admitted below enforce: the record of what ` +
        'enforce would refuse, which goes with each pod when it is replaced; nothing reads it once meshgate is gone',
    );
  return out;
}
