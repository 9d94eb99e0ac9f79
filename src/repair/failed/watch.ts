/**
 * Feeds the repair controller from a watch on meshgate's pods (label meshgate.io/redirect), on every replica. Its
 * initial state is read in pages (INITIAL), not streamed: every judge reads each pod's status (a failed validator
 * may show on a Running pod: the kubelet keeps a pod Running when its sandbox is recreated and its init containers
 * fail again), so every labelled pod must be read whole before the replica is ready; and whole pods cost the
 * apiserver 2–3 times more CPU streamed as a watch-list's initial events (0.23–0.41 ms a pod, each encoded and
 * flushed as its own event) than listed in pages of 500 from its cache (0.11–0.13 ms a pod), measured on v1.34.12
 * with the bench's Istio pods (14 KiB of JSON each, issue 32). The pages are parsed item by item as they arrive
 * (src/kube/api/list-items.ts): memory stays flat either way.
 */
import type { KubeClient } from '../../kube/api/client.ts';
import type { Logger } from 'pino';
import { meshgatePodReflector } from '../../kube/meshgate-pods.ts';
import type { ReflectorOptions } from '../../kube/reflector.ts';
import type { RepairController } from './controller.ts';
import type { PodForRepair } from './decide.ts';
import { errorFields } from '../../log/fields.ts';

/** How the repair controller's pod watches read their initial state (see above). */
export const INITIAL = 'pages' satisfies ReflectorOptions['initial'];

export interface PodWatch {
  /** The first complete list has been delivered. */
  synced(): boolean;
  stop(): void;
}

export async function watchRepairPods(
  client: KubeClient,
  ctl: Pick<RepairController, 'observe' | 'forget'>,
  logger: Logger,
): Promise<PodWatch> {
  let synced = false;
  const observe = (p: unknown) =>
    ctl.observe(p as PodForRepair).catch((err) => logger.error({ err: errorFields(err) }, 'repair failed'));
  const reflector = meshgatePodReflector(
    client,
    {
      list: () => ({ add: observe, done: () => undefined }),
      upsert: observe,
      remove: (p) => ctl.forget((p as PodForRepair).metadata?.uid ?? ''),
      onSynced: () => (synced = true),
      onError: (err) => logger.warn({ err: errorFields(err) }, 'pod watch interrupted; resuming'),
    },
    { initial: INITIAL },
  );
  await reflector.start();
  return { synced: () => synced, stop: () => reflector.stop() };
}
