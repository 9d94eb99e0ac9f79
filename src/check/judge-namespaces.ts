/**
 * Which namespaces meshgate guards, found as the apiserver finds them: each webhook entry's namespaceSelector
 * evaluated against the namespace's labels (kubernetes.io/metadata.name included, which the apiserver sets). An
 * entry with an objectSelector guards only the pods it selects there. Pure.
 */
import type { ProxyIds } from '../mesh/istio-openshift.ts';
import { LEVELS, type Level } from '../admission/level.ts';
import type { NamespaceFacts, Read, WebhookConfig, WebhookEntry } from './facts.ts';
import { entriesOf, isWorkloadEntry } from './judge-webhook.ts';
import { result, type CheckResult, type Item } from './report.ts';
import { matchesSelector, narrows } from '../util/selector.ts';

export interface OptedIn {
  namespace: string;
  /** The mutating entries selecting the namespace: a pod there is guarded when one of them selects it. */
  mutating: WebhookEntry[];
  validating: WebhookEntry[];
  /** The enforcement level its pods are judged at: the route of the entries selecting it (entryLevel). */
  level: Level;
  /** Istio on OpenShift: the proxy's IDs its pods get (proxy.idsFrom: openshift, src/config/per-namespace.ts). */
  proxyIds?: ProxyIds;
}

/**
 * The level an entry's route serves (src/admission/handlers.ts: `/validate/audit`, `/mutate/selected-pods/warn`;
 * no suffix: enforce), read from the path the apiserver calls — the chart renders one entry per level.
 */
export function entryLevel(e: WebhookEntry): Level {
  let path = e.service?.path ?? '';
  if (e.url) {
    try {
      path = new URL(e.url).pathname;
    } catch {
      return 'enforce';
    }
  }
  const last = path.split('/').pop() as Level;
  return LEVELS.includes(last) ? last : 'enforce';
}

/** The namespace's level: the validating entries' (which refuse), else the mutating ones'; the strictest of several. */
function namespaceLevel(validating: readonly WebhookEntry[], mutating: readonly WebhookEntry[]): Level {
  const entries = validating.length ? validating : mutating;
  const levels = entries.map(entryLevel);
  return LEVELS.find((l) => levels.includes(l)) ?? 'enforce';
}

export function optedInNamespaces(
  namespaces: readonly NamespaceFacts[],
  mutating: Read<WebhookConfig>,
  validating: Read<WebhookConfig>,
): OptedIn[] {
  const m = entriesOf([mutating]).map((e) => e.entry);
  // Workload-template entries judge Deployments and their kin, not pods: they guard no namespace.
  const v = entriesOf([validating])
    .map((e) => e.entry)
    .filter((e) => !isWorkloadEntry(e));
  const out: OptedIn[] = [];
  for (const ns of namespaces) {
    const labels = { 'kubernetes.io/metadata.name': ns.name, ...ns.labels };
    const sel = (entries: WebhookEntry[]) => entries.filter((e) => matchesSelector(e.namespaceSelector, labels));
    const mutatingHere = sel(m);
    const validatingHere = sel(v);
    const o = {
      namespace: ns.name,
      mutating: mutatingHere,
      validating: validatingHere,
      level: namespaceLevel(validatingHere, mutatingHere),
      ...(ns.proxyIds ? { proxyIds: ns.proxyIds } : {}),
    };
    if (o.mutating.length || o.validating.length) out.push(o);
  }
  return out;
}

/** Whether one of the entries sends this pod (by its labels) to meshgate. */
export function guardsPod(
  entries: readonly WebhookEntry[],
  podLabels: Readonly<Record<string, string>> | undefined,
): boolean {
  return entries.some((e) => matchesSelector(e.objectSelector, podLabels ?? {}));
}

/** Whether some entry sends every pod of the namespace (no narrowing objectSelector): the namespace is opted in. */
export function wholeNamespace(o: OptedIn): boolean {
  return o.mutating.some((e) => !narrows(e.objectSelector));
}

function how(entries: readonly WebhookEntry[]): string {
  return entries.map((e) => (narrows(e.objectSelector) ? `${e.name} (labelled pods only)` : e.name)).join(', ');
}

export function judgeNamespaces(opted: readonly OptedIn[], haveWebhooks: boolean): CheckResult {
  if (!haveWebhooks) return { code: 'namespaces_opted_in', status: 'skip', message: 'not checked: no webhooks' };
  // Pod-level entries (istio's sidecar.istio.io/inject=true, podOptInNamespaceLabels) may select most namespaces of
  // a cluster, each guarding only the pods labelled so: counted, not listed.
  const whole = opted.filter(wholeNamespace);
  const podLevel = opted.filter((o) => o.mutating.length && !wholeNamespace(o)).length;
  if (whole.length + podLevel === 0) {
    return result('namespaces_opted_in', 'warn', 'no namespace is opted in: meshgate guards nothing');
  }
  const items: Item[] = whole.map((o) => ({
    name: o.namespace,
    status: 'ok',
    message: `selected by ${how(o.mutating)}; level ${o.level}`,
  }));
  const also = podLevel ? `; in ${podLevel} more, the pods labelled to opt in` : '';
  return result(
    'namespaces_opted_in',
    'ok',
    `${whole.length} namespace${whole.length === 1 ? '' : 's'} opted in${also}`,
    items,
  );
}

export function judgeSelectorsAgree(
  opted: readonly OptedIn[],
  mutating: Read<WebhookConfig>,
  validating: Read<WebhookConfig>,
): CheckResult {
  if (entriesOf([mutating]).length === 0 || entriesOf([validating]).length === 0) {
    return {
      code: 'webhook_selectors_agree',
      status: 'skip',
      message: 'not checked: both webhook configurations are needed',
    };
  }
  const items: Item[] = [];
  for (const o of opted) {
    if (!o.validating.length)
      items.push({
        name: o.namespace,
        status: 'fail',
        message: `injected (${how(o.mutating)}) but not enforced: no validating webhook selects it`,
      });
    else if (!o.mutating.length)
      items.push({
        name: o.namespace,
        status: 'fail',
        message: `enforced (${how(o.validating)}) but never injected: its pods are refused`,
      });
  }
  if (items.length)
    return result(
      'webhook_selectors_agree',
      'fail',
      `${items.length} namespaces are selected by only one of the two webhook configurations`,
      items,
    );
  return result('webhook_selectors_agree', 'ok', 'the mutating and the validating webhooks select the same namespaces');
}
