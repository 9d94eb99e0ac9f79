/** Feeds the repair controller from a watch on meshgate's pods (label meshgate.io/redirect). */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { REDIRECT_LABEL } from '../inject/constants.ts';
import { Reflector, type ListPage } from '../kube/reflector.ts';
import type { RepairController } from './controller.ts';
import type { PodForRepair } from './decide.ts';

export async function watchRepairPods(kc: KubeConfig, ctl: RepairController, logger: Logger): Promise<() => void> {
  const api = kc.makeApiClient(CoreV1Api);
  const act = (p: unknown) => ctl.onPod(p as PodForRepair).catch((err) => logger.error({ err: String(err) }, 'repair failed'));
  const reflector = new Reflector({
    kc,
    path: '/api/v1/pods',
    labelSelector: REDIRECT_LABEL,
    list: (p) => api.listPodForAllNamespaces({ limit: p.limit, _continue: p._continue, labelSelector: p.labelSelector }) as unknown as Promise<ListPage>,
    replace: (items) => items.forEach(act),
    upsert: act,
    remove: (p) => ctl.forget((p as PodForRepair).metadata?.uid ?? ''),
    onError: (err) => logger.warn({ err: String(err) }, 'pod watch interrupted; resuming'),
  });
  await reflector.start();
  return () => reflector.stop();
}
