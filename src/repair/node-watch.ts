/**
 * Feeds the node quarantine the Nodes labelled meshgate.io/cni-verified=false (every withdrawn node is), on every
 * replica, so a new leader knows the withdrawn nodes at once. Unverified nodes are few; each is kept as a small
 * NodeView. A node given back gets label "true" from its agent and leaves the selection (a DELETED event).
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { VERIFIED_LABEL } from '../node/contract.ts';
import { Reflector, type ListPage } from '../kube/reflector.ts';
import { nodeView } from './node-view.ts';
import type { NodeQuarantine } from './quarantine.ts';
import { errorFields } from '../log/fields.ts';

type NodeArg = Parameters<typeof nodeView>[0];

export async function watchWithdrawnNodes(
  kc: KubeConfig,
  q: NodeQuarantine,
  logger: Logger,
): Promise<{ synced(): boolean; stop(): void }> {
  const api = kc.makeApiClient(CoreV1Api);
  let synced = false;
  const reflector = new Reflector({
    kc,
    path: '/api/v1/nodes',
    labelSelector: `${VERIFIED_LABEL}=false`,
    list: (p) =>
      api.listNode({
        limit: p.limit,
        _continue: p._continue,
        labelSelector: p.labelSelector,
      }) as unknown as Promise<ListPage>,
    replace: (items) => q.replaceNodes(items.map((n) => nodeView(n as NodeArg))),
    upsert: (n) => q.upsertNode(nodeView(n as NodeArg)),
    remove: (n) => q.removeNode((n as NodeArg).metadata?.name ?? ''),
    onSynced: () => (synced = true),
    onError: (err) => logger.warn({ err: errorFields(err) }, 'node watch interrupted; resuming'),
  });
  await reflector.start();
  return { synced: () => synced, stop: () => reflector.stop() };
}
