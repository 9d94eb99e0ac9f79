/**
 * What the mesh injectors this harness runs (Istio's, istio.ts; Linkerd's, linkerd.ts) do alike once started: wait
 * for their readiness endpoint, stopping the process if it never answers; and register their chart's
 * MutatingWebhookConfiguration pointed at them, deregistered again before the process stops.
 */
import { AdmissionregistrationV1Api, type V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { configMapData, parseManifests } from '../../chart/helm.ts';
import type { ControlPlane } from './controlplane.ts';
import * as procs from './procs.ts';
import { waitFor } from './wait.ts';

/**
 * A mesh's chart rendered by the control plane's helm (`helm template <args>`, `chart` naming it in errors): a data
 * key of one of its ConfigMaps, and its MutatingWebhookConfiguration `name`.
 */
export async function renderMeshChart(
  cp: ControlPlane,
  chart: string,
  args: string[],
): Promise<{ data(configMap: string, key: string): string; webhook(name: string): V1MutatingWebhookConfiguration }> {
  const r = await cp.helm(['template', ...args]);
  if (r.code !== 0) throw new Error(`helm template ${chart} failed (exit ${r.code}):\n${r.stderr}`);
  const rendered = parseManifests(r.stdout);
  return {
    data: (configMap, key) => configMapData(rendered, configMap, key),
    webhook: (name) => rendered.one('MutatingWebhookConfiguration', name) as V1MutatingWebhookConfiguration,
  };
}

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
