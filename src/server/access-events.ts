/**
 * The Event on the pod for each exec or attach that reached one of its mesh containers (src/admission/access.ts):
 * `kubectl describe pod` then shows the pod's own team who debugged its proxy, or tried to — the apiserver's audit log
 * (meshgate.io/reason) is the cluster admin's record, this is theirs. Posted after the answer, never on the admission
 * path: a bounded queue, one Event at a time; past MAX_PENDING waiting, further records are dropped and the drop is
 * logged (the audit annotation and the decision metric still count each access).
 */
import type { Logger } from 'pino';
import { accessEvent, type AccessRecord } from '../admission/access.ts';
import { errorFields } from '../log/fields.ts';
import type { KubeClient } from '../kube/api/client.ts';
import { createEvent } from '../kube/events.ts';

/** Records waiting for their Event: a burst of 64 execs is recorded whole; a flood is not kept in memory. */
export const MAX_PENDING = 64;
const COMPONENT = 'meshgate-webhook';

export interface AccessEvents {
  record(a: AccessRecord): void;
  /** Resolves when every record taken so far has been posted (or failed): for tests and shutdown. */
  idle(): Promise<void>;
  readonly stats: { posted: number; failed: number; dropped: number };
}

export function accessEvents(
  post: (a: AccessRecord) => Promise<void>,
  logger?: Logger,
  max = MAX_PENDING,
): AccessEvents {
  const pending: AccessRecord[] = [];
  const stats = { posted: 0, failed: 0, dropped: 0 };
  let running: Promise<void> | undefined;
  const drain = async () => {
    for (let a = pending.shift(); a !== undefined; a = pending.shift()) {
      try {
        await post(a);
        stats.posted++;
      } catch (err) {
        stats.failed++;
        logger?.warn(
          { err: errorFields(err), pod: `${a.request.namespace}/${a.request.pod}` },
          'access Event not posted',
        );
      }
    }
    running = undefined;
  };
  return {
    stats,
    record(a) {
      if (pending.length >= max) {
        stats.dropped++;
        logger?.warn(
          { pod: `${a.request.namespace}/${a.request.pod}`, reason: a.reason },
          'access Event dropped: queue full',
        );
        return;
      }
      pending.push(a);
      running ??= drain();
    },
    idle: () => running ?? Promise.resolve(),
  };
}

/** Posts each record as an Event on its pod with the webhook's client (RBAC: events create). */
export function kubeAccessEvents(client: KubeClient, logger: Logger): AccessEvents {
  return accessEvents(async (a) => {
    const e = accessEvent(a);
    await createEvent(
      client,
      { kind: 'Pod', name: a.request.pod, namespace: a.request.namespace },
      { ...e, component: COMPONENT },
    );
  }, logger);
}
