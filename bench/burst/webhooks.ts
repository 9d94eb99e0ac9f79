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
  const caBundle = Buffer.from(child.ca).toString('base64');
  const common = {
    failurePolicy: 'Fail',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    matchPolicy: 'Equivalent',
    timeoutSeconds: 10,
    namespaceSelector: { matchLabels: MESHGATE_LABEL },
  };
  try {
    await api.createMutatingWebhookConfiguration({
      body: {
        metadata: { name },
        webhooks: [
          {
            ...common,
            name: 'inject.meshgate.io',
            reinvocationPolicy: 'IfNeeded',
            clientConfig: { url: `${child.url}${echo ? '/allow-sized' : '/mutate'}`, caBundle },
            rules: [
              {
                operations: ['CREATE'],
                apiGroups: [''],
                apiVersions: ['v1'],
                resources: ['pods'],
                scope: 'Namespaced',
              },
            ],
          },
        ],
      } as never,
    });
    await api.createValidatingWebhookConfiguration({
      body: {
        metadata: { name },
        webhooks: [
          {
            ...common,
            name: 'enforce.meshgate.io',
            clientConfig: { url: `${child.url}${echo ? '/allow' : '/validate'}`, caBundle },
            rules: [
              {
                operations: ['CREATE', 'UPDATE'],
                apiGroups: [''],
                apiVersions: ['v1'],
                resources: ['pods', 'pods/ephemeralcontainers'],
                scope: 'Namespaced',
              },
              {
                operations: ['CREATE'],
                apiGroups: [''],
                apiVersions: ['v1'],
                resources: ['pods/binding', 'bindings'],
                scope: 'Namespaced',
              },
            ],
          },
        ],
      } as never,
    });
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
