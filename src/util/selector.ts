/**
 * Kubernetes label selectors evaluated as the apiserver evaluates a webhook's namespaceSelector and objectSelector
 * (k8s.io/apimachinery labels.Selector): matchLabels and every matchExpressions requirement must hold; an absent
 * or empty selector matches everything. An operator the apiserver would refuse matches nothing here, so a
 * configuration we cannot read is never reported as selecting namespaces.
 */

export interface Requirement {
  key: string;
  operator: string;
  values?: readonly string[];
}

export interface LabelSelector {
  matchLabels?: Readonly<Record<string, string>>;
  matchExpressions?: readonly Requirement[];
}

function holds(r: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(labels[r.key]);
    case 'NotIn':
      return !has || !values.includes(labels[r.key]);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}

export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>> = {},
): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  return (selector.matchExpressions ?? []).every((r) => holds(r, labels));
}

/** Whether a selector narrows anything: the API returns an absent objectSelector as `{}`, which selects all. */
export function narrows(s: LabelSelector | undefined): boolean {
  return Object.keys(s?.matchLabels ?? {}).length > 0 || (s?.matchExpressions ?? []).length > 0;
}

/**
 * The selector in the API's query syntax (`a=b,c in (d),!e`), so a LIST returns only the pods it selects; undefined
 * when an operator has no such form (then the caller lists everything and filters with matchesSelector).
 */
export function selectorQuery(s: LabelSelector): string | undefined {
  const parts = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const r of s.matchExpressions ?? []) {
    const values = (r.values ?? []).join(',');
    if (r.operator === 'In') parts.push(`${r.key} in (${values})`);
    else if (r.operator === 'NotIn') parts.push(`${r.key} notin (${values})`);
    else if (r.operator === 'Exists') parts.push(r.key);
    else if (r.operator === 'DoesNotExist') parts.push(`!${r.key}`);
    else return undefined;
  }
  return parts.join(',');
}
