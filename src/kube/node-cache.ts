/** Node facts fed by a watch on Nodes: the admission path reads the store, never the API. */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { NodeFactStore, factFromNode } from '../facts/node-facts.ts';
import { Reflector, type ListPage } from './reflector.ts';

export function startNodeCache(kc: KubeConfig, onError?: (err: unknown) => void): { store: NodeFactStore; reflector: Reflector; ready: Promise<void> } {
  const store = new NodeFactStore();
  const api = kc.makeApiClient(CoreV1Api);
  const reflector = new Reflector({
    kc,
    path: '/api/v1/nodes',
    list: (p) => api.listNode({ limit: p.limit, _continue: p._continue }) as unknown as Promise<ListPage>,
    replace: (items) => store.replaceAll(items.map((n) => factFromNode(n as Parameters<typeof factFromNode>[0]))),
    upsert: (n) => store.upsert(factFromNode(n as Parameters<typeof factFromNode>[0])),
    remove: (n) => store.delete((n as { metadata?: { name?: string } }).metadata?.name ?? ''),
    onSynced: () => store.markSynced(),
    onError,
  });
  return { store, reflector, ready: reflector.start() };
}
