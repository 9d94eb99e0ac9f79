/**
 * meshgate registered for real with a harness control plane: the webhook server runs in the test process
 * (port 0 on 127.0.0.1, self-signed CA with IP SAN 127.0.0.1) and Mutating/ValidatingWebhookConfigurations
 * point the apiserver at it with `clientConfig.url` and the CA as caBundle.
 */
import pino from 'pino';
import {
  AdmissionregistrationV1Api,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingWebhookConfiguration,
  ApiException,
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import type { ControlPlane } from './harness/index.ts';
import { waitFor } from './harness/index.ts';
import { testConfig } from '../support/config.ts';
import type { MeshName } from '../../src/mesh/types.ts';
import { startServer, type RunningServer, type ServeOptions } from '../../src/server/start.ts';
import type { Verdict as AdmissionVerdict } from '../../src/admission/review.ts';
import type { ChainVerdict } from '../../src/cni/types.ts';
import { KubeNodePublisher } from '../../src/agent/kube-publisher.ts';
import { daemonClient } from './daemon-client.ts';

export const WEBHOOK_NAME = 'meshgate-e2e';

export interface Captured {
  route: string;
  body: unknown;
  verdict: AdmissionVerdict;
}

/**
 * How meshgate's webhook configurations are registered. `optIn`: also the chart's pod opt-in entries (objectSelector
 * meshgate.io/inject=true in namespaces with these labels). `name` orders meshgate among other mutating webhooks: the
 * apiserver calls configurations in name order (so 'a-…' runs before Istio's istio-sidecar-injector, 'z-…' after it).
 */
export interface RegisterOptions {
  failurePolicy?: 'Fail' | 'Ignore';
  optIn?: Record<string, string>;
  name?: string;
}

export interface Meshgate {
  server: RunningServer;
  reviews: Captured[];
  /** Registers both webhook configurations. */
  register(opts?: RegisterOptions): Promise<void>;
  /** Removes both webhook configurations of that name. */
  unregister(name?: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The reasons of the mutate calls the apiserver made for the pod named `name` since review `since` (an index into
 * `reviews`): one per call, so a pod create that costs two calls shows two.
 */
export function mutateCalls(mg: Meshgate, since: number, name: string): string[] {
  return mutateVerdicts(mg, since, name).map((v) => v.reason);
}

/** The verdicts of those calls. */
export function mutateVerdicts(mg: Meshgate, since: number, name: string): AdmissionVerdict[] {
  return mg.reviews
    .slice(since)
    .filter(
      (r) =>
        r.route === 'mutate' && (r.body as { request: { object?: V1Pod } }).request.object?.metadata?.name === name,
    )
    .map((r) => r.verdict);
}

/**
 * meshgate with a test config of `mesh` (default custom: meshgate injects its own templates) plus `config` overrides.
 * `opts.kc`: act as someone else than the admin (the chart's webhook service account); `opts.markKeys`: the admission
 * mark's keys (src/mark/); `opts.register`: registered so before it is returned (stopped if that fails).
 */
export async function startMeshgate(
  cp: ControlPlane,
  config: Record<string, unknown> = {},
  mesh: MeshName = 'custom',
  opts: { kc?: KubeConfig; markKeys?: ServeOptions['markKeys']; register?: RegisterOptions } = {},
): Promise<Meshgate> {
  const reviews: Captured[] = [];
  const server = await startServer({
    // The default `apps.privileges: restricted`, not the unit tests' baseline: e2e pods are Pod Security restricted.
    config: testConfig(mesh, { apps: { privileges: 'restricted' }, ...config }),
    port: 0,
    host: '127.0.0.1',
    tlsSans: ['127.0.0.1'],
    kube: daemonClient(opts.kc ?? cp.kc),
    markKeys: opts.markKeys,
    drainSeconds: 0,
    logger: pino({ level: process.env.MESHGATE_E2E_LOG ?? 'warn' }),
    onReview: (route, body, verdict) => void reviews.push({ route, body, verdict }),
  });
  await server.synced;
  const api = cp.kc.makeApiClient(AdmissionregistrationV1Api);
  const mg: Meshgate = {
    server,
    reviews,
    async register({ failurePolicy = 'Fail', optIn, name = WEBHOOK_NAME }: RegisterOptions = {}) {
      await registerWebhooks(api, server, failurePolicy, optIn, name);
    },
    async unregister(name = WEBHOOK_NAME) {
      await api.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
      await api.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
    },
    stop: () => server.shutdown(),
  };
  if (opts.register)
    await mg.register(opts.register).catch(async (err: unknown) => {
      await server.shutdown();
      throw err;
    });
  return mg;
}

async function registerWebhooks(
  api: AdmissionregistrationV1Api,
  server: RunningServer,
  failurePolicy: 'Fail' | 'Ignore',
  optIn: Record<string, string> | undefined,
  name: string,
) {
  const { mutating, validating } = webhookConfigurations({
    name,
    url: server.url,
    ca: server.ca!,
    failurePolicy,
    optIn,
  });
  await api.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
  await api.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
  await api.createMutatingWebhookConfiguration({ body: mutating as never });
  await api.createValidatingWebhookConfiguration({ body: validating as never });
}

/**
 * Both webhook configurations as the chart renders them, for a meshgate at `url` serving with `ca`: pods CREATE to
 * /mutate (reinvocation IfNeeded), pod CREATE/UPDATE, ephemeral containers and both ways a pod gets a node to
 * /validate, in namespaces labelled meshgate.io/inject=enabled; `optIn` adds the chart's pod opt-in entry. `routes`
 * points them elsewhere (the burst bench's echo).
 */
export function webhookConfigurations(o: {
  name: string;
  url: string;
  ca: string;
  failurePolicy?: 'Fail' | 'Ignore';
  optIn?: Record<string, string>;
  routes?: { mutate: string; validate: string };
}): { mutating: object; validating: object } {
  const caBundle = Buffer.from(o.ca).toString('base64');
  const routes = o.routes ?? { mutate: '/mutate', validate: '/validate' };
  const common = {
    failurePolicy: o.failurePolicy ?? 'Fail',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    matchPolicy: 'Equivalent',
    timeoutSeconds: 10,
    namespaceSelector: { matchLabels: { 'meshgate.io/inject': 'enabled' } },
  };
  const mutating = {
    metadata: { name: o.name },
    webhooks: [
      {
        ...common,
        name: 'inject.meshgate.io',
        reinvocationPolicy: 'IfNeeded',
        clientConfig: { url: `${o.url}${routes.mutate}`, caBundle },
        rules: [
          { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' },
        ],
      },
    ],
  };
  if (o.optIn) {
    // As the chart renders it: labelled namespaces stay with the first entry, the pod label selects the rest.
    mutating.webhooks.push({
      ...mutating.webhooks[0],
      name: 'optin.inject.meshgate.io',
      namespaceSelector: {
        matchLabels: o.optIn,
        matchExpressions: [{ key: 'meshgate.io/inject', operator: 'NotIn', values: ['enabled'] }],
      },
      objectSelector: { matchLabels: { 'meshgate.io/inject': 'true' } },
    } as never);
  }
  const validating = {
    metadata: { name: o.name },
    webhooks: [
      {
        ...common,
        name: 'enforce.meshgate.io',
        clientConfig: { url: `${o.url}${routes.validate}`, caBundle },
        // As the chart: pod CREATE and UPDATE (and ephemeral containers), and both ways a pod gets a node.
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
  };
  return { mutating, validating };
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

/**
 * A node agent's verdict for tests: verified when the chain holds `pluginType` after bridge, else
 * mesh_plugin_missing; the evidence as the agent would record it.
 */
export function testVerdict(verified: boolean, pluginType = 'istio-cni'): ChainVerdict {
  return {
    verified,
    reason: verified ? 'verified' : 'mesh_plugin_missing',
    message: verified ? 'test verdict: verified' : 'test verdict: the mesh plugin is missing',
    evidence: {
      runtime: 'containerd',
      pluginType,
      file: '10-test.conflist',
      sha256: '0'.repeat(64),
      plugins: verified ? ['bridge', pluginType] : ['bridge'],
      candidates: [],
      checkedAt: new Date().toISOString(),
    },
  } as unknown as ChainVerdict;
}

/**
 * Publishes a node agent verdict (testVerdict) on a (kwok) Node through the agent's own publisher: label,
 * MeshCNIVerified condition and evidence, as a real agent would. A label alone no longer verifies a node.
 */
export async function publishVerdict(
  cp: ControlPlane,
  node: string,
  verified: boolean,
  pluginType = 'istio-cni',
): Promise<void> {
  await new KubeNodePublisher(daemonClient(cp.kc)).publish(node, testVerdict(verified, pluginType), false);
}

export async function createNamespace(
  cp: ControlPlane,
  name: string,
  labels: Record<string, string> = {},
  annotations?: Record<string, string>,
): Promise<void> {
  await cp.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name, labels, annotations } } });
  // Pods need the namespace's default ServiceAccount, made by the controller-manager.
  await waitFor(
    `serviceaccount ${name}/default`,
    async () => {
      await cp.kc.makeApiClient(CoreV1Api).readNamespacedServiceAccount({ name: 'default', namespace: name });
      return true;
    },
    { timeoutMs: 30_000 },
  );
}

export async function labelNode(cp: ControlPlane, node: string, labels: Record<string, string | null>): Promise<void> {
  await cp.kc
    .makeApiClient(CoreV1Api)
    .patchNode(
      { name: node, body: { metadata: { labels } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

/** A pod that passes Pod Security `restricted` on its own, so only what meshgate adds can make it fail. */
export function restrictedPod(name: string, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: name } },
    spec: {
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
      ...extra,
    } as V1Pod['spec'],
  };
}

export const names = (pod: V1Pod) => ({
  init: (pod.spec?.initContainers ?? []).map((c) => c.name),
  containers: (pod.spec?.containers ?? []).map((c) => c.name),
});

/**
 * The chart's own two webhook configurations (every entry, its selectors and its path: /mutate,
 * /mutate/selected-pods/audit, …), pointed at meshgate's server in this process instead of the Service (or of the
 * URL they were pointed at before).
 */
export async function pointChartWebhooksAt(cp: ControlPlane, url: string, ca: string): Promise<void> {
  const api = cp.kc.makeApiClient(AdmissionregistrationV1Api);
  const caBundle = Buffer.from(ca).toString('base64');
  const point = <T extends V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration>(c: T): T => {
    const copy = structuredClone(c);
    copy.metadata = { name: c.metadata!.name, labels: c.metadata!.labels };
    for (const w of copy.webhooks ?? []) {
      const path = w.clientConfig.service?.path ?? new URL(w.clientConfig.url!).pathname;
      w.clientConfig = { url: `${url}${path}`, caBundle };
    }
    return copy;
  };
  const mutating = point(await api.readMutatingWebhookConfiguration({ name: 'meshgate' }));
  const validating = point(await api.readValidatingWebhookConfiguration({ name: 'meshgate' }));
  await api.deleteMutatingWebhookConfiguration({ name: 'meshgate' });
  await api.deleteValidatingWebhookConfiguration({ name: 'meshgate' });
  await api.createMutatingWebhookConfiguration({ body: mutating });
  await api.createValidatingWebhookConfiguration({ body: validating });
}

/** `meshgate check -o json` as the suites read it: the exit code, and each check's result with its items. */
export interface CheckJson {
  exitCode: number;
  results: Array<{
    code: string;
    status: string;
    message: string;
    items?: Array<{ name: string; status: string; reason?: string; message: string; command?: string }>;
  }>;
}
