/**
 * Grows the bench's cluster to a size through the API, as fast as the apiserver takes it: CONCURRENCY creates in
 * flight on meshgate's own client (keep-alive, the admin's client certificate), Nodes with their agents' Leases, the
 * namespaces (each with the `default` ServiceAccount the ServiceAccount admission plugin wants: there is no
 * controller-manager), then pods. Objects are numbered, so growing from one size to the next creates only the new
 * ones. Progress goes to the log every PROGRESS_MS; the caller's deadline stops a growth that would take too long
 * (the bench then projects from the sizes it reached).
 */
import type { KubeClient } from '../../src/kube/api/client.ts';
import { core, group } from '../../src/kube/api/paths.ts';
import { statusCode } from '../../src/kube/errors.ts';
import { GUARDED_NAMESPACES, NAMESPACES, OPT_IN, scaleLease, scaleNode, scalePod } from './objects.ts';

/** Creates in flight: enough to keep two apiserver cores busy without queueing in priority and fairness. */
const CONCURRENCY = 24;
const PROGRESS_MS = 15_000;

export interface Size {
  nodes: number;
  pods: number;
}

/** The time budget ran out while growing: `reached` is the size the cluster has (every object below it exists). */
export class DeadlinePassed extends Error {
  reached: Size = { nodes: 0, pods: 0 };
}

/**
 * `body(i)` POSTed to `path(i)` for i in [from, to), CONCURRENCY at a time; an existing object is fine (409). Past
 * the deadline no new create starts; those in flight finish, and the DeadlinePassed says how far it got.
 */
async function createRange(
  client: KubeClient,
  what: string,
  from: number,
  to: number,
  create: (i: number) => { path: string; body: unknown },
  log: (s: string) => void,
  deadline: number,
): Promise<void> {
  let next = from;
  let done = 0;
  let late = false;
  const t0 = performance.now();
  let shown = t0;
  const worker = async () => {
    while (next < to && !late) {
      if (Date.now() > deadline) {
        late = true;
        break;
      }
      const { path, body } = create(next++);
      try {
        await client.create(path, body);
      } catch (err) {
        if (statusCode(err) !== 409) throw err;
      }
      done++;
      const now = performance.now();
      if (now - shown > PROGRESS_MS) {
        shown = now;
        log(`    ${what}: ${from + done} of ${to} (${Math.round(done / ((now - t0) / 1000))}/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  if (late) {
    const err = new DeadlinePassed(`${what}: the bench's time budget ran out at ${next} of ${to}`);
    err.reached = { nodes: 0, pods: next };
    throw err;
  }
  if (to > from) log(`    ${what}: ${to - from} created in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** Namespaces, meshgate's, and each one's default ServiceAccount. */
export async function prepare(client: KubeClient, meshgateNamespace: string): Promise<void> {
  const names = [meshgateNamespace, ...Array.from({ length: NAMESPACES }, (_, i) => `team-${i}`)];
  for (const name of names) {
    const i = Number(name.slice(5));
    const labels = name.startsWith('team-') && i < GUARDED_NAMESPACES ? OPT_IN : {};
    for (const [path, body] of [
      [core('namespaces'), { metadata: { name, labels } }],
      [core('serviceaccounts', { namespace: name }), { metadata: { name: 'default' } }],
    ] as const) {
      await client.create(path, body).catch((err) => {
        if (statusCode(err) !== 409) throw err;
      });
    }
  }
}

/** From `from` to `to` objects: the new Nodes and their Leases, then the new pods (bound to the `to` Nodes). */
export async function grow(
  client: KubeClient,
  from: Size,
  to: Size,
  meshgateNamespace: string,
  log: (s: string) => void,
  deadline: number,
): Promise<void> {
  const now = new Date();
  const leases = group('coordination.k8s.io/v1', 'leases', { namespace: meshgateNamespace });
  await createRange(
    client,
    'Nodes',
    from.nodes,
    to.nodes,
    (i) => ({ path: core('nodes'), body: scaleNode(i, now.toISOString()) }),
    log,
    Infinity, // Nodes and their Leases are few and come first: a budget that runs out stops in the pods.
  );
  await createRange(
    client,
    'Leases',
    from.nodes,
    to.nodes,
    (i) => ({ path: leases, body: scaleLease(i, meshgateNamespace, now) }),
    log,
    Infinity,
  );
  try {
    await createRange(
      client,
      'pods',
      from.pods,
      to.pods,
      (i) => {
        const pod = scalePod(i, to.nodes);
        const namespace = (pod.metadata as { namespace: string }).namespace;
        return { path: core('pods', { namespace }), body: pod };
      },
      log,
      deadline,
    );
  } catch (err) {
    if (err instanceof DeadlinePassed) err.reached = { nodes: to.nodes, pods: err.reached.pods };
    throw err;
  }
}
