/**
 * What the mesh injectors this harness runs (Istio's, istio.ts; Linkerd's, linkerd.ts) do alike once started: wait
 * for their readiness endpoint, stopping the process if it never answers; and register their chart's
 * MutatingWebhookConfiguration pointed at them, deregistered again before the process stops.
 */
import { AdmissionregistrationV1Api, type V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import type { ControlPlane } from './controlplane.ts';
import * as procs from './procs.ts';
import { waitFor } from './wait.ts';

/** Waits until `ready` answers true while `proc` runs (its log's tail in the error); stops `proc` if it never does. */
export async function awaitInjectorReady(
  proc: procs.Component,
  what: string,
  logPath: string,
  ready: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  try {
    await waitFor(
      what,
      async () => {
        procs.assertRunning(proc);
        return ready();
      },
      { timeoutMs, describe: () => procs.tail(logPath, 40) },
    );
  } catch (err) {
    await procs.stopComponent(proc);
    throw err;
  }
}

export interface InjectorRegistration {
  /** Creates (or replaces) the chart's MutatingWebhookConfiguration with clientConfig.url pointing here. */
  register(opts?: { failurePolicy?: 'Fail' | 'Ignore' }): Promise<V1MutatingWebhookConfiguration>;
  unregister(): Promise<void>;
  /** Deregisters (if registered) and stops the process. */
  stop(): Promise<void>;
}

/**
 * The registration of an injector serving at `base` (https, the cluster CA): `configuration` is the chart's
 * MutatingWebhookConfiguration at the time of registering, each webhook's service path (default `defaultPath`) taken
 * onto `base`; `failurePolicy`, when given, set on each.
 */
export function injectorRegistration(
  cp: ControlPlane,
  proc: procs.Component,
  base: string,
  defaultPath: string,
  configuration: () => V1MutatingWebhookConfiguration,
): InjectorRegistration {
  const api = cp.kc.makeApiClient(AdmissionregistrationV1Api);
  const name = configuration().metadata!.name!;
  const caBundle = Buffer.from(cp.ca.certPem).toString('base64');
  let registered = false;
  const unregister = async () => {
    if (!registered) return;
    await api.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined); // already gone is fine
    registered = false;
  };
  return {
    async register({ failurePolicy } = {}) {
      const body = structuredClone(configuration());
      body.metadata = { name, labels: body.metadata?.labels };
      for (const wh of body.webhooks ?? []) {
        wh.clientConfig = { url: `${base}${wh.clientConfig.service?.path ?? defaultPath}`, caBundle };
        if (failurePolicy) wh.failurePolicy = failurePolicy;
      }
      await api.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
      const created = await api.createMutatingWebhookConfiguration({ body });
      registered = true;
      return created;
    },
    unregister,
    async stop() {
      await unregister();
      await procs.stopComponent(proc);
    },
  };
}
