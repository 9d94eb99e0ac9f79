// Kubernetes label-selector semantics (apimachinery labels.Selector), to evaluate the chart's webhook entries over a
// matrix of namespaces and pods without a cluster. The e2e test (test/e2e/chart-selectors.test.ts) checks the same
// entries against the real apiserver.
import type { Obj } from './helm.ts';

export type Labels = Record<string, string>;

export function matches(selector: Obj | undefined, labels: Labels): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const ok =
      e.operator === 'In'
        ? has && e.values.includes(labels[e.key])
        : e.operator === 'NotIn'
          ? !has || !e.values.includes(labels[e.key])
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : (() => {
                  throw new Error(`unknown operator ${e.operator}`);
                })();
    if (!ok) return false;
  }
  return true;
}

/** Names of the webhook entries that select a pod with `pod` labels in a namespace named `ns` with `nsLabels`. */
export function selecting(webhooks: Obj[], ns: string, nsLabels: Labels, pod: Labels): string[] {
  const namespace = { ...nsLabels, 'kubernetes.io/metadata.name': ns };
  return webhooks
    .filter((w) => matches(w.namespaceSelector, namespace) && matches(w.objectSelector, pod))
    .map((w) => w.name);
}
