/**
 * The guard on the Kubernetes API: a watch of the pods bound to this node (`spec.nodeName=<node>`, as the kubelet
 * watches its own), reduced at once to the guard's projection (guard/pods.ts), and its two writes — deleting a
 * guarded pod on this node and recording an Event on it. RBAC: pods get/list/watch/delete, events create; the
 * chart's admission policy (node-agent-pods-policy.yaml) lets the agent delete only meshgate-admitted pods bound
 * to its own node.
 */
import type { KubeClient } from '../../kube/api/client.ts';
import { core } from '../../kube/api/paths.ts';
import { createEvent } from '../../kube/events.ts';
import { statusCode } from '../../kube/errors.ts';
import { Reflector } from '../../kube/reflector.ts';
import type { GuardActions, GuardedPods } from './guard.ts';
import { type GuardPodFields, type GuardedPod, type GuardView, guardOf } from './pods.ts';

const COMPONENT = 'meshgate-node-agent';

export class WatchedPods implements GuardedPods {
  readonly #pods = new Map<string, GuardedPod>();
  readonly #reflector: Reflector;

  constructor(client: KubeClient, nodeName: string, view: GuardView, onError?: (err: unknown) => void) {
    const put = (p: unknown) => {
      const pod = p as GuardPodFields;
      const uid = pod.metadata?.uid;
      if (!uid) return;
      const g = guardOf(pod, view);
      if (g) this.#pods.set(uid, g);
      else this.#pods.delete(uid);
    };
    this.#reflector = new Reflector({
      client,
      path: core('pods'),
      fieldSelector: `spec.nodeName=${nodeName}`,
      // A (re)list: the projections of the pods listed, swapped in at its end.
      list: () => {
        const next = new Map<string, GuardedPod>();
        return {
          add: (p) => {
            const pod = p as GuardPodFields;
            const uid = pod.metadata?.uid;
            const g = uid ? guardOf(pod, view) : undefined;
            if (uid && g) next.set(uid, g);
          },
          done: () => {
            this.#pods.clear();
            for (const [uid, g] of next) this.#pods.set(uid, g);
          },
        };
      },
      upsert: put,
      remove: (p) => this.#pods.delete((p as GuardPodFields).metadata?.uid ?? ''),
      onError,
    });
  }

  /** Resolves after the first list. */
  start(): Promise<void> {
    return this.#reflector.start();
  }

  stop(): void {
    this.#reflector.stop();
  }

  current(): ReadonlyMap<string, GuardedPod> {
    return this.#pods;
  }
}

export function kubeGuardActions(client: KubeClient): GuardActions {
  return {
    async deletePod(pod) {
      try {
        await client.delete(core('pods', { namespace: pod.namespace, name: pod.name }), {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          // Its processes are already killed; nothing of it should get another chance to run.
          gracePeriodSeconds: 0,
          // Never another pod that took the name since.
          preconditions: { uid: pod.uid },
        });
      } catch (err) {
        // Gone already, or a new pod of that name: nothing of ours left to remove.
        if (statusCode(err) !== 404 && statusCode(err) !== 409) throw err;
      }
    },
    event(pod, reason, message) {
      const involved = { kind: 'Pod' as const, name: pod.name, namespace: pod.namespace, uid: pod.uid };
      return createEvent(client, involved, { type: 'Warning', reason, message, component: COMPONENT });
    },
  };
}
