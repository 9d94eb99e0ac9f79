/** RepairApi on a real apiserver: DELETE with a UID precondition, and core/v1 Events on the pod. */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { RepairApi } from './controller.ts';

export function kubeRepairApi(kc: KubeConfig, component = 'meshgate-repair'): RepairApi {
  const api = kc.makeApiClient(CoreV1Api);
  return {
    async deletePod(namespace, name, uid) {
      await api.deleteNamespacedPod({ name, namespace, body: { preconditions: { uid } } });
    },
    async event(pod, type, reason, message) {
      const ns = pod.metadata!.namespace!;
      const now = new Date();
      await api.createNamespacedEvent({
        namespace: ns,
        body: {
          metadata: { generateName: `${pod.metadata!.name}.`, namespace: ns },
          involvedObject: {
            apiVersion: 'v1',
            kind: 'Pod',
            name: pod.metadata!.name,
            namespace: ns,
            uid: pod.metadata!.uid,
          },
          reason,
          message,
          type,
          source: { component },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    },
  };
}
