/**
 * Feeds the pod notices (src/repair/notices/notices.ts) the pods admitted below enforce: a watch on the label
 * meshgate.io/would-deny, on every replica; and, when given, the PolicyReports built from the same pods
 * (src/repair/reports/reports.ts). Held pods carry meshgate.io/redirect and come with the repair controller's own
 * pod watch (src/repair/failed/watch.ts).
 */
import type { Logger } from 'pino';
import type { KubeClient } from '../../kube/api/client.ts';
import { errorFields } from '../../log/fields.ts';
import { WOULD_DENY_LABEL } from '../../admission/level.ts';
import { meshgatePodReflector } from '../../kube/meshgate-pods.ts';
import type { PodForRepair } from '../failed/decide.ts';
import type { PodNotices } from './notices.ts';
import { INITIAL, type PodWatch } from '../failed/watch.ts';
import type { PolicyReports } from '../reports/reports.ts';

export async function watchWouldDenyPods(
  client: KubeClient,
  notices: PodNotices,
  logger: Logger,
  reports?: PolicyReports,
): Promise<PodWatch> {
  let synced = false;
  const observe = (p: unknown) =>
    notices.observe(p as PodForRepair).catch((err) => logger.error({ err: errorFields(err) }, 'pod notice failed'));
  const reflector = meshgatePodReflector(
    client,
    {
      list: () => {
        const listed = reports?.list();
        return {
          add: (p) => {
            observe(p);
            listed?.add(p as PodForRepair);
          },
          done: () => listed?.done(),
        };
      },
      upsert: (p) => {
        observe(p);
        reports?.observe(p as PodForRepair);
      },
      remove: (p) => {
        notices.forget((p as PodForRepair).metadata?.uid ?? '');
        reports?.forget((p as PodForRepair).metadata?.uid ?? '');
      },
      onSynced: () => (synced = true),
      onError: (err) => logger.warn({ err: errorFields(err) }, 'would-deny pod watch interrupted; resuming'),
    },
    { labelSelector: WOULD_DENY_LABEL, initial: INITIAL },
  );
  await reflector.start();
  return { synced: () => synced, stop: () => reflector.stop() };
}
