/**
 * Feeds the node quarantine the Nodes labelled meshgate.io/cni-verified=false (every withdrawn node is), on every
 * replica, so a new leader knows the withdrawn nodes at once. Unverified nodes are few; each is kept as a small
 * NodeView. A node given back gets label "true" from its agent and leaves the selection (a DELETED event).
 */
import type { Logger } from 'pino';
import { VERIFIED_LABEL } from '../../contract/node.ts';
import type { KubeClient } from '../../kube/api/client.ts';
import { core } from '../../kube/api/paths.ts';
import { Reflector } from '../../kube/reflector.ts';
import { nodeView } from './node-view.ts';
import type { NodeQuarantine } from './quarantine.ts';
import { errorFields } from '../../log/fields.ts';

type NodeArg = Parameters<typeof nodeView>[0];

export async function watchWithdrawnNodes(
  client: KubeClient,
  q: NodeQuarantine,
  logger: Logger,
): Promise<{ synced(): boolean; stop(): void }> {
  let synced = false;
  const reflector = new Reflector({
    client,
    path: core('nodes'),
    labelSelector: `${VERIFIED_LABEL}=false`,
    list: () => {
      const views: ReturnType<typeof nodeView>[] = [];
      return { add: (n) => views.push(nodeView(n as NodeArg)), done: () => q.replaceNodes(views) };
    },
    upsert: (n) => q.upsertNode(nodeView(n as NodeArg)),
    remove: (n) => q.removeNode((n as NodeArg).metadata?.name ?? ''),
    onSynced: () => (synced = true),
    onError: (err) => logger.warn({ err: errorFields(err) }, 'node watch interrupted; resuming'),
  });
  await reflector.start();
  return { synced: () => synced, stop: () => reflector.stop() };
}
