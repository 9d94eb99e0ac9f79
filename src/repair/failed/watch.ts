/** Feeds the repair controller from a watch on meshgate's pods (label meshgate.io/redirect), on every replica. */
import type { KubeClient } from '../../kube/api/client.ts';
import type { Logger } from 'pino';
import { meshgatePodReflector } from '../../kube/meshgate-pods.ts';
import type { RepairController } from './controller.ts';
import type { PodForRepair } from './decide.ts';
import { errorFields } from '../../log/fields.ts';

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
  const reflector = meshgatePodReflector(client, {
    list: () => ({ add: observe, done: () => undefined }),
    upsert: observe,
    remove: (p) => ctl.forget((p as PodForRepair).metadata?.uid ?? ''),
    onSynced: () => (synced = true),
    onError: (err) => logger.warn({ err: errorFields(err) }, 'pod watch interrupted; resuming'),
  });
  await reflector.start();
  return { synced: () => synced, stop: () => reflector.stop() };
}
