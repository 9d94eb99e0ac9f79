/** Node facts fed by a watch on Nodes: the admission path reads the store, never the API. */
import { NodeFactStore, factFromNode, type NodeExpectations } from '../facts/node-facts.ts';
import type { KubeClient } from './api/client.ts';
import { core } from './api/paths.ts';
import { Reflector } from './reflector.ts';

export function startNodeCache(
  client: KubeClient,
  expect: NodeExpectations,
  onError?: (err: unknown) => void,
): { store: NodeFactStore; reflector: Reflector; ready: Promise<void> } {
  const store = new NodeFactStore();
  const reflector = new Reflector({
    client,
    path: core('nodes'),
    replace: (items) =>
      store.replaceAll(items.map((n) => factFromNode(n as Parameters<typeof factFromNode>[0], expect))),
    upsert: (n) => store.upsert(factFromNode(n as Parameters<typeof factFromNode>[0], expect)),
    remove: (n) => store.delete((n as { metadata?: { name?: string } }).metadata?.name ?? ''),
    onSynced: () => store.markSynced(),
    onError,
  });
  // Facts age without events when an agent dies: re-judge them often enough that a stale one is caught within
  // a few percent of the bound (and at least every 30 s).
  const sweep = setInterval(
    () => store.expireStale(expect.maxVerdictAgeMs, Date.now()),
    Math.min(30_000, expect.maxVerdictAgeMs / 20),
  );
  sweep.unref();
  const stop = reflector.stop.bind(reflector);
  reflector.stop = () => {
    clearInterval(sweep);
    stop();
  };
  return { store, reflector, ready: reflector.start() };
}
