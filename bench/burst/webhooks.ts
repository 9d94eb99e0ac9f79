/**
 * The webhooks of the apiserver burst (bench/burst): meshgate in a process of its own (bench/server.ts compiled and
 * run with the image's Node flags, given the cluster's kubeconfig, so its node and pod caches watch the cluster as in
 * production), registered like the chart registers it (mutating pods CREATE with reinvocation, validating pods and
 * bindings), and Istio's injector with the configuration its chart renders (test/e2e/harness/istio.ts).
 */
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import type { ControlPlane } from '../../test/e2e/harness/index.ts';
import { startServerChild, type ServerChild } from '../procs.ts';
import { compiledServer } from '../compiled.ts';
import { webhookConfigurations } from '../../test/e2e/meshgate.ts';

export const MESHGATE_LABEL = { 'meshgate.io/inject': 'enabled' };
export const ISTIO_LABEL = { 'istio-injection': 'enabled' };

export interface RunningMeshgate {
  child: ServerChild;
  /** Name of the webhook configurations (the apiserver calls mutating configurations in name order). */
  name: string;
  unregister(): Promise<void>;
}

/**
 * Starts meshgate (mesh `mesh`) against the cluster and registers both configurations, named `name`. `echo`: the
 * same process and registration, but its bench routes answer: /allow-sized (a canned 2.2 KB patch, as large as
 * meshgate's) for mutation and /allow for validation, so the apiserver pays what any webhook costs it.
 */
export async function startMeshgate(
  cp: ControlPlane,
  mesh: 'custom' | 'istio',
  name: string,
  echo = false,
): Promise<RunningMeshgate> {
  // As the image runs meshgate: compiled JavaScript with the image's Node flags (bench/compiled.ts).
  const server = compiledServer((s) => console.log(s));
  const child = await startServerChild(
    { logLevel: 'warn', verifiedNodes: [], mesh, kubeconfig: cp.kubeconfigPath },
    server.execArgv,
    { script: server.script },
  );
  const api = cp.kc.makeApiClient(AdmissionregistrationV1Api);
  const { mutating, validating } = webhookConfigurations({
    name,
    url: child.url,
    ca: child.ca,
    routes: echo ? { mutate: '/allow-sized', validate: '/allow' } : undefined,
  });
  try {
    await api.createMutatingWebhookConfiguration({ body: mutating as never });
    await api.createValidatingWebhookConfiguration({ body: validating as never });
  } catch (err) {
    await child.stop();
    throw err;
  }
  return {
    child,
    name,
    async unregister() {
      await api.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
      await api.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
      await child.stop();
    },
  };
}
