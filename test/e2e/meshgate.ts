/**
 * meshgate registered for real with a harness control plane: the webhook server runs in the test process
 * (port 0 on 127.0.0.1, self-signed CA with IP SAN 127.0.0.1) and Mutating/ValidatingWebhookConfigurations
 * point the apiserver at it with `clientConfig.url` and the CA as caBundle.
 */
import pino from 'pino';
import { AdmissionregistrationV1Api, ApiException, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { ControlPlane } from './harness/index.ts';
import { waitFor } from './harness/index.ts';
import { buildConfig } from '../../src/config/load.ts';
import { startServer, type RunningServer } from '../../src/server/start.ts';
import type { Verdict } from '../../src/admission/review.ts';

export const WEBHOOK_NAME = 'meshgate-e2e';

export interface Captured {
  route: string;
  body: unknown;
  verdict: Verdict;
}

export interface Meshgate {
  server: RunningServer;
  reviews: Captured[];
  /** optIn: also the chart's pod opt-in entries (objectSelector meshgate.io/inject=true in namespaces with these labels). */
  register(opts?: { failurePolicy?: 'Fail' | 'Ignore'; optIn?: Record<string, string> }): Promise<void>;
  stop(): Promise<void>;
}

export async function startMeshgate(cp: ControlPlane, config: Record<string, unknown> = {}): Promise<Meshgate> {
  const reviews: Captured[] = [];
  const server = await startServer({
    config: buildConfig(config, 'e2e'),
    port: 0,
    host: '127.0.0.1',
    tlsSans: ['127.0.0.1'],
    kc: cp.kc,
    drainSeconds: 0,
    logger: pino({ level: process.env.MESHGATE_E2E_LOG ?? 'warn' }),
    onReview: (route, body, verdict) => void reviews.push({ route, body, verdict }),
  });
  await server.synced;
  const api = cp.kc.makeApiClient(AdmissionregistrationV1Api);
  return {
    server,
    reviews,
    async register({ failurePolicy = 'Fail', optIn }: { failurePolicy?: 'Fail' | 'Ignore'; optIn?: Record<string, string> } = {}) {
      await registerWebhooks(api, server, failurePolicy, optIn);
    },
    stop: () => server.shutdown(),
  };
}

async function registerWebhooks(api: AdmissionregistrationV1Api, server: RunningServer, failurePolicy: 'Fail' | 'Ignore', optIn?: Record<string, string>) {
  const caBundle = Buffer.from(server.ca!).toString('base64');
  const namespaceSelector = { matchLabels: { 'meshgate.io/inject': 'enabled' } };
  const common = { failurePolicy, sideEffects: 'None', admissionReviewVersions: ['v1'], matchPolicy: 'Equivalent', timeoutSeconds: 10, namespaceSelector };
  const mutating = {
    metadata: { name: WEBHOOK_NAME },
    webhooks: [{
      ...common,
      name: 'inject.meshgate.io',
      reinvocationPolicy: 'IfNeeded',
      clientConfig: { url: `${server.url}/mutate`, caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
    }],
  };
  if (optIn) {
    // As the chart renders it: labelled namespaces stay with the first entry, the pod label selects the rest.
    mutating.webhooks.push({
      ...mutating.webhooks[0],
      name: 'optin.inject.meshgate.io',
      namespaceSelector: { matchLabels: optIn, matchExpressions: [{ key: 'meshgate.io/inject', operator: 'NotIn', values: ['enabled'] }] },
      objectSelector: { matchLabels: { 'meshgate.io/inject': 'true' } },
    } as never);
  }
  const validating = {
    metadata: { name: WEBHOOK_NAME },
    webhooks: [{
      ...common,
      name: 'enforce.meshgate.io',
      clientConfig: { url: `${server.url}/validate`, caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/binding'], scope: 'Namespaced' }],
    }],
  };
  await api.deleteMutatingWebhookConfiguration({ name: WEBHOOK_NAME }).catch(() => undefined);
  await api.deleteValidatingWebhookConfiguration({ name: WEBHOOK_NAME }).catch(() => undefined);
  await api.createMutatingWebhookConfiguration({ body: mutating as never });
  await api.createValidatingWebhookConfiguration({ body: validating as never });
}

/** The apiserver's error text for a failed call (admission denials arrive as 4xx with a Status body). */
export function apiError(err: unknown): string {
  if (err instanceof ApiException) {
    try {
      return (JSON.parse(String(err.body)) as { message?: string }).message ?? String(err.body);
    } catch {
      return String(err.body);
    }
  }
  return String(err);
}

export async function createNamespace(cp: ControlPlane, name: string, labels: Record<string, string> = {}): Promise<void> {
  await cp.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name, labels } } });
  // Pods need the namespace's default ServiceAccount, made by the controller-manager.
  await waitFor(`serviceaccount ${name}/default`, async () => {
    await cp.kc.makeApiClient(CoreV1Api).readNamespacedServiceAccount({ name: 'default', namespace: name });
    return true;
  }, { timeoutMs: 30_000 });
}

export async function labelNode(cp: ControlPlane, node: string, labels: Record<string, string | null>): Promise<void> {
  await cp.kc.makeApiClient(CoreV1Api).patchNode({ name: node, body: { metadata: { labels } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
}

/** A pod that passes Pod Security `restricted` on its own, so only what meshgate adds can make it fail. */
export function restrictedPod(name: string, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: name } },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{
        name: 'app',
        image: 'registry.example/app:1',
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      }],
      ...extra,
    } as V1Pod['spec'],
  };
}

export const names = (pod: V1Pod) => ({
  init: (pod.spec?.initContainers ?? []).map((c) => c.name),
  containers: (pod.spec?.containers ?? []).map((c) => c.name),
});
