/**
 * Checks of the `ambient` section (config/types.ts): only Istio has an ambient mode, and the enablement selectors are
 * read as the apiserver reads label selectors, so one the apiserver would refuse is refused here, naming its path.
 */
import type { MeshgateConfig } from './types.ts';

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
function isStringMap(v: unknown): boolean {
  return (
    typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')
  );
}

function selectorProblems(p: string[], path: string, s: unknown): void {
  if (s === undefined) return;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) {
    p.push(`${path}: expected a label selector (matchLabels, matchExpressions)`);
    return;
  }
  for (const key of Object.keys(s))
    if (key !== 'matchLabels' && key !== 'matchExpressions')
      p.push(`${path}.${key}: unknown key (known: matchLabels, matchExpressions)`);
  const { matchLabels, matchExpressions } = s as { matchLabels?: unknown; matchExpressions?: unknown };
  if (matchLabels !== undefined && !isStringMap(matchLabels))
    p.push(`${path}.matchLabels: expected a mapping of label to string value`);
  if (matchExpressions === undefined) return;
  if (!Array.isArray(matchExpressions)) {
    p.push(`${path}.matchExpressions: expected a list`);
    return;
  }
  matchExpressions.forEach((r: { key?: unknown; operator?: unknown; values?: unknown }, i) => {
    const where = `${path}.matchExpressions[${i}]`;
    if (typeof r?.key !== 'string' || r.key === '') p.push(`${where}.key: must be a label key`);
    if (typeof r?.operator !== 'string' || !OPERATORS.includes(r.operator)) {
      p.push(`${where}.operator: ${JSON.stringify(r?.operator)} is not one of ${OPERATORS.join(', ')}`);
      return;
    }
    const values = r.values ?? [];
    const list = Array.isArray(values) && values.every((v) => typeof v === 'string');
    const needs = r.operator === 'In' || r.operator === 'NotIn';
    if (!list) p.push(`${where}.values: expected a list of strings`);
    else if (needs && values.length === 0) p.push(`${where}.values: ${r.operator} needs at least one value`);
    else if (!needs && values.length > 0) p.push(`${where}.values: ${r.operator} takes no values`);
  });
}

export function ambientProblems(c: MeshgateConfig): string[] {
  const p: string[] = [];
  const a = c.ambient;
  if (a.enabled && c.mesh !== 'istio') p.push(`ambient.enabled: only mesh istio has an ambient mode, not ${c.mesh}`);
  p.push(...enablementSelectorProblems(a.enablementSelectors, 'ambient.enablementSelectors'));
  return p;
}

/**
 * What is wrong with a list of Istio's enablement selectors, each problem naming its path under `path`: meshgate's
 * configuration, or istio-cni's own ConfigMap when the webhook learns them from it (src/policy/ambient/learn.ts).
 */
export function enablementSelectorProblems(selectors: readonly unknown[], path: string): string[] {
  const p: string[] = [];
  selectors.forEach((s, i) => {
    const where = `${path}[${i}]`;
    if (typeof s !== 'object' || s === null || Array.isArray(s)) {
      p.push(`${where}: expected a mapping with podSelector and/or namespaceSelector`);
      return;
    }
    for (const key of Object.keys(s))
      if (key !== 'podSelector' && key !== 'namespaceSelector')
        p.push(`${where}.${key}: unknown key (known: podSelector, namespaceSelector)`);
    const { podSelector, namespaceSelector } = s as { podSelector?: unknown; namespaceSelector?: unknown };
    selectorProblems(p, `${where}.podSelector`, podSelector);
    selectorProblems(p, `${where}.namespaceSelector`, namespaceSelector);
  });
  return p;
}
