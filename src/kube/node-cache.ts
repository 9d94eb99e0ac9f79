/**
 * Node facts fed by a watch on Nodes and, where the agents renew Leases, a watch on those: the admission path reads
 * the store, never the API.
 * What it holds, per node (docs/benchmarks.md §9): the fact (name, verified, reason and message, kubelet version,
 * heartbeat — strings the nodes share are held once), and the Lease's renewal time. Why: every review reads
 * "is node X verified" and "do all kubelets support native sidecars"; nothing else of a Node. Each Node is reduced
 * to its fact as its event arrives and dropped.
 */
import { leaseNode, NODE_LEASE_LABEL } from '../contract/node.ts';
import { judgeNode, NodeFactStore, type NodeExpectations } from '../facts/node-facts.ts';
import type { KubeClient } from './api/client.ts';
import { core, group } from './api/paths.ts';
import { type LeaseRenewal, renewedAt } from '../contract/node.ts';
import { Reflector } from './reflector.ts';
import { statusCode } from './errors.ts';

type NodeArg = Parameters<typeof judgeNode>[0];

export interface NodeCacheOptions {
  /** The namespace of the agents' Leases (src/contract/node.ts); undefined: liveness from the condition alone. */
  leaseNamespace?: string;
  /** Tests and the bench: how the initial state is read (src/kube/reflector.ts). */
  initial?: 'auto' | 'watch-list' | 'pages';
}

export function startNodeCache(
  client: KubeClient,
  expect: NodeExpectations,
  onError?: (err: unknown) => void,
  o: NodeCacheOptions = {},
): { store: NodeFactStore; reflector: Reflector; ready: Promise<void> } {
  const store = new NodeFactStore({ maxAgeMs: expect.maxVerdictAgeMs });
  const fact = (n: unknown) => judgeNode(n as NodeArg, expect);
  const nodes = new Reflector({
    client,
    path: core('nodes'),
    initial: o.initial,
    list: () => {
      const next: ReturnType<typeof fact>[] = [];
      return { add: (n) => next.push(fact(n)), done: () => store.replaceAll(next) };
    },
    upsert: (n) => store.upsert(fact(n)),
    remove: (n) => store.delete((n as NodeArg).metadata?.name ?? ''),
    onError,
  });
  const leases =
    o.leaseNamespace === undefined
      ? undefined
      : new Reflector({
          client,
          path: group('coordination.k8s.io/v1', 'leases', { namespace: o.leaseNamespace }),
          labelSelector: NODE_LEASE_LABEL,
          initial: o.initial,
          list: () => {
            const next = new Map<string, number>();
            return {
              add: (l) => {
                const node = leaseNode((l as LeaseRenewal).metadata?.name);
                const at = renewedAt(l as LeaseRenewal);
                if (node !== undefined && at !== undefined) next.set(node, at);
              },
              done: () => store.replaceLeases(next),
            };
          },
          upsert: (l) => {
            const node = leaseNode((l as LeaseRenewal).metadata?.name);
            if (node !== undefined) store.renewed(node, renewedAt(l as LeaseRenewal));
          },
          remove: (l) => {
            const node = leaseNode((l as LeaseRenewal).metadata?.name);
            if (node !== undefined) store.renewed(node, undefined);
          },
          onError,
        });
  // Facts age without events when an agent dies: re-judge them often enough that a stale one is caught within
  // a few percent of the bound (and at least every 30 s).
  const sweep = setInterval(
    () => store.expireStale(undefined, Date.now()),
    Math.min(30_000, expect.maxVerdictAgeMs / 20),
  );
  sweep.unref();
  const reflector = nodes;
  const stop = nodes.stop.bind(nodes);
  reflector.stop = () => {
    clearInterval(sweep);
    leases?.stop();
    stop();
  };
  // Synced once both are: before the Leases, a verified node would read as stale. Without the right to read them (a
  // chart from before the Lease heartbeat, until its upgrade completes) liveness comes from the condition alone, as
  // it did then: reported through onError, not fatal.
  const leasesRead = leases?.start().catch((err) => {
    if (statusCode(err) !== 403) throw err;
    onError?.(err);
  });
  const ready = Promise.all([nodes.start(), leasesRead]).then(() => store.markSynced());
  return { store, reflector, ready };
}
