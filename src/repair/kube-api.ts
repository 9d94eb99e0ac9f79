/** RepairApi on a real apiserver: DELETE with a UID precondition, and core/v1 Events on the pod. */
import type { KubeClient } from '../kube/api/client.ts';
import { core } from '../kube/api/paths.ts';
import { createEvent } from '../kube/events.ts';
import type { RepairApi } from './failed/controller.ts';

export function kubeRepairApi(client: KubeClient, component = 'meshgate-repair'): RepairApi {
  return {
    async deletePod(namespace, name, uid) {
      await client.delete(core('pods', { namespace, name }), { preconditions: { uid } });
    },
    async event(pod, type, reason, message) {
      const { name, namespace, uid } = pod.metadata!;
      await createEvent(
        client,
        { kind: 'Pod', name: name!, namespace: namespace!, uid },
        { type, reason, message, component },
      );
    },
  };
}
