/** Feeds the repair controller from a watch on meshgate's pods (label meshgate.io/redirect), on every replica. */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { REDIRECT_LABEL } from '../inject/constants.ts';
import { Reflector, type ListPage } from '../kube/reflector.ts';
import type { RepairController } from './controller.ts';
import type { PodForRepair } from './decide.ts';

export interface PodWatch {
  /** The first complete list has been delivered. */
  synced(): boolean;
  stop(): void;
}

export async function watchRepairPods(kc: KubeConfig, ctl: RepairController, logger: Logger): Promise<PodWatch> {
  const api = kc.makeApiClient(CoreV1Api);
  let synced = false;
  const observe = (p: unknown) =>
    ctl.observe(p as PodForRepair).catch((err) => logger.error({ err: String(err) }, 'repair failed'));
  const reflector = new Reflector({
    kc,
    path: '/api/v1/pods',
    labelSelector: REDIRECT_LABEL,
    list: (p) =>
      api.listPodForAllNamespaces({
        limit: p.limit,
        _continue: p._continue,
        labelSelector: p.labelSelector,
      }) as unknown as Promise<ListPage>,
    replace: (items) => items.forEach(observe),
    upsert: observe,
    remove: (p) => ctl.forget((p as PodForRepair).metadata?.uid ?? ''),
    onSynced: () => (synced = true),
    onError: (err) => logger.warn({ err: String(err) }, 'pod watch interrupted; resuming'),
  });
  await reflector.start();
  return { synced: () => synced, stop: () => reflector.stop() };
}
