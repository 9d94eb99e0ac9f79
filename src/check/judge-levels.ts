/**
 * The enforcement level of each guarded namespace (src/admission/level.ts), as the webhook entries selecting it
 * say (judge-namespaces.ts `entryLevel`): a warning while any is below enforce, listing them with what audit found
 * there and, where nothing would be refused, the command that promotes the namespace. Pure.
 */
import type { Level } from '../admission/level.ts';
import { wholeNamespace, type OptedIn } from './judge-namespaces.ts';
import { result, type CheckResult, type Item } from './report.ts';

import { ENFORCEMENT_LABEL } from '../contract/names.ts';

export { ENFORCEMENT_LABEL };

export function promoteCommand(namespace: string): string {
  return `kubectl label namespace ${namespace} ${ENFORCEMENT_LABEL}=enforce --overwrite`;
}

/**
 * @param wouldRefuse pods that would be refused at enforce, per namespace (judge-pods.ts)
 * @param defaultLevel config.enforcement.default: the level of a namespace without the label
 */
export function judgeEnforcement(
  opted: readonly OptedIn[],
  wouldRefuse: ReadonlyMap<string, number>,
  defaultLevel: Level,
): CheckResult {
  const guarded = opted.filter((o) => o.mutating.length);
  if (guarded.length === 0)
    return { code: 'enforcement_level', status: 'skip', message: 'not checked: no namespace is opted in' };
  // Pod-level entries (istio's sidecar.istio.io/inject=true, podOptInNamespaceLabels) may select most namespaces of
  // a cluster, each only for the pods labelled to opt in: counted apart, listed only where something was found.
  const whole = guarded.filter(wholeNamespace);
  const podOnly = guarded.filter((o) => !wholeNamespace(o));
  const below = whole.filter((o) => o.level !== 'enforce');
  const podBelow = podOnly.filter((o) => o.level !== 'enforce');
  const listed = [...below, ...podBelow.filter((o) => wouldRefuse.has(o.namespace))];
  const items: Item[] = listed.map((o) => {
    const n = wouldRefuse.get(o.namespace) ?? 0;
    const what = o.level === 'audit' ? 'admitted and recorded' : 'admitted with a warning';
    if (n > 0)
      return {
        name: o.namespace,
        status: 'warn',
        message:
          `at ${o.level}: pods meshgate would refuse are ${what}; ${n} running pod${n === 1 ? '' : 's'} would be ` +
          'refused at enforce (see pods_would_be_refused): fix them before promoting',
      };
    return {
      name: o.namespace,
      status: 'warn',
      message: `at ${o.level}: pods meshgate would refuse are ${what}; nothing found that enforce would refuse`,
      command: promoteCommand(o.namespace),
    };
  });
  const defaults = `unlabelled guarded namespaces are at ${defaultLevel} (config.enforcement.default)`;
  if (below.length + podBelow.length === 0) {
    const pods = podOnly.length ? `, and so are pods opting in by label in ${podOnly.length} more` : '';
    return result(
      'enforcement_level',
      'ok',
      `all ${whole.length} guarded namespaces are at enforce${pods}; ${defaults}`,
    );
  }
  const pods = podBelow.length ? `; pods opting in by label in ${podBelow.length} more are judged below enforce` : '';
  return result(
    'enforcement_level',
    'warn',
    `${below.length} of ${whole.length} guarded namespace${whole.length === 1 ? ' is' : 's are'} below enforce` +
      `${pods} (pods meshgate would refuse run there); ${defaults}`,
    items,
  );
}
