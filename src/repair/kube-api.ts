/** RepairApi on a real apiserver: DELETE with a UID precondition, and core/v1 Events on the pod. */
import type { KubeClient } from '../kube/api/client.ts';
import { core } from '../kube/api/paths.ts';
import { createEvent } from '../kube/events.ts';
import type { RepairApi } from './failed/controller.ts';

export function kubeRepairApi(client: KubeClient, component = 'meshgate-repair'): RepairApi {
  return {
    async deletePod(namespace, name, uid, gracePeriodSeconds) {
      await client.delete(core('pods', { namespace, name }), {
        preconditions: { uid },
        ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
      });
    },
    async event(pod, type, reason, message) {
      // Pods come from a watch of the apiserver, which names every one.
      const { name, namespace, uid } = pod.metadata ?? {};
      if (!name || !namespace) throw new Error(`cannot record ${reason} on a pod without a name and namespace`);
      await createEvent(client, { kind: 'Pod', name, namespace, uid }, { type, reason, message, component });
    },
  };
}
