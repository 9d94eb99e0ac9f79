/**
 * Corpus pods as the apiserver sends them to a webhook: created with a server-side dry run, so they come back
 * defaulted (imagePullPolicy, terminationMessagePath, resources: {}, dnsPolicy, …), through the admission plugins
 * that run before webhooks (the ServiceAccount token volume, default tolerations, priority) and serialised by the
 * apiserver's Go encoder. Istio's injector computes its patch against that shape (it adds
 * /spec/initContainers/0/resources/limits into a `resources: {}` it expects), so every peer gets these bodies.
 * uid and creationTimestamp are removed: the apiserver sets them after mutating admission; so is a CREATE's oldObject.
 */
import { stringify } from 'yaml';
import type { ControlPlane } from '../../test/e2e/harness/index.ts';
import type { Review } from '../corpus.ts';

type Obj = Record<string, unknown>;

/** A namespace the apiserver accepts: the corpus has placeholders such as TEST_NAMESPACE_REPLACE_ME. */
const validNamespace = (ns: string | undefined) => (ns && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns) ? ns : 'default');

export async function apiserverShaped(cp: ControlPlane, given: Review[], log: (s: string) => void): Promise<Review[]> {
  const reviews = given.map((r) => ({
    ...r,
    request: { ...r.request, namespace: validNamespace(r.request.namespace) },
  }));
  const pods = reviews.map((r) => r.request.object as { metadata?: Obj; spec?: Obj });
  const namespaces = [...new Set(reviews.map((r) => r.request.namespace ?? 'default'))];
  // Without a controller-manager nobody makes ServiceAccounts: the ones pods name (or `default`) are made here.
  const accounts = new Set<string>();
  for (const [i, r] of reviews.entries()) {
    accounts.add(
      `${r.request.namespace ?? 'default'}/${(pods[i].spec?.serviceAccountName as string | undefined) ?? 'default'}`,
    );
  }
  const setup = [
    ...namespaces
      .filter((n) => n !== 'default')
      .map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    ...[...accounts].map((a) => ({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { namespace: a.split('/')[0], name: a.split('/')[1] },
    })),
  ];
  const made = await cp.kubectl(['apply', '-f', '-'], { input: setup.map((o) => stringify(o)).join('---\n') });
  if (made.code !== 0) throw new Error(`creating namespaces and service accounts failed: ${made.stderr}`);
  // Unique names (the corpus repeats some, and has generateName-only pods), so each answer maps back to its pod.
  const nameOf = (i: number) =>
    `${String(pods[i].metadata?.name ?? pods[i].metadata?.generateName ?? 'pod').replace(/-$/, '')}-b${i}`;
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: reviews.map((r, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      ...pods[i],
      metadata: { ...pods[i].metadata, name: nameOf(i), namespace: r.request.namespace ?? 'default' },
    })),
  };
  const dry = await cp.kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], {
    input: JSON.stringify(list),
  });
  // One pretty-printed object per pod, back to back: each starts with `{` and ends with `}` at column 0.
  const items =
    dry.stdout.trim() === ''
      ? []
      : dry.stdout
          .trim()
          .split(/(?<=^\})\n(?=\{)/m)
          .map((t) => JSON.parse(t) as Obj);
  const byKey = new Map(items.map((p) => [`${(p.metadata as Obj).namespace}/${(p.metadata as Obj).name}`, p]));
  const shaped: Review[] = [];
  for (const [i, r] of reviews.entries()) {
    const pod = byKey.get(`${r.request.namespace ?? 'default'}/${nameOf(i)}`);
    if (!pod) continue;
    const m = { ...(pod.metadata as Obj) };
    delete m.uid;
    delete m.creationTimestamp;
    // A CREATE carries no oldObject (the apiserver sends null); one corpus review has `{}` there, which Kyverno refuses.
    const request: Review['request'] = { ...r.request, name: nameOf(i), object: { ...pod, metadata: m } };
    delete request.oldObject;
    shaped.push({ ...r, request });
  }
  log(
    `apiserver-shaped bodies: ${shaped.length} of ${reviews.length} corpus pods accepted by a server-side dry run${dry.code !== 0 ? ` (refused: ${dry.stderr.trim().split('\n').join('; ').slice(0, 400)})` : ''}`,
  );
  if (shaped.length === 0) throw new Error(`no corpus pod survived the dry run: ${dry.stderr}`);
  return shaped;
}
