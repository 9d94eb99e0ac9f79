// meshgate's admission webhook for the real-node tier: the real server (src/server/start.ts) in the test process,
// on one fixed port with a serving certificate of the cluster CA, so it can go down and come back at the same
// address with the same caBundle — what a webhook Deployment restarting behind its Service looks like to the
// apiserver. The two webhook configurations are registered as the chart renders them (charts/meshgate, HEAD:
// templates/{mutating,validating}webhookconfiguration.yaml and the meshgate.namespaceSelector helper), with
// `clientConfig.url` instead of the Service and each failurePolicy chosen separately (S4, S5).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import type { ControlPlane } from '../../e2e/harness/controlplane.ts';
import { freePort } from '../../e2e/harness/net.ts';
import type { MeshName } from '../../../src/mesh/types.ts';
import { testConfig } from '../../support/config.ts';
import type { Compiled } from '../../../src/config/compile.ts';
import { startServer, type RunningServer } from '../../../src/server/start.ts';
import type { Verdict as AdmissionVerdict } from '../../../src/admission/review.ts';
import { generateKey } from '../../../src/mark/keys.ts';
import { daemonClient } from '../../e2e/daemon-client.ts';

/** Both configurations' name; Istio's `istio-sidecar-injector` sorts first, so the apiserver calls Istio first. */
export const WEBHOOK_CONFIG_NAME = 'meshgate';
/** meshgate's own namespace in the tier (config.meshNamespace, excluded by the selector like the chart's release namespace). */
export const MESH_NAMESPACE = 'meshgate';

export type FailurePolicy = 'Fail' | 'Ignore';

export interface Review {
  route: string;
  verdict: AdmissionVerdict;
  at: number;
}

export interface Webhook {
  config: Compiled;
  url: string;
  /** The admission mark's keys (as the chart mounts its Secret): the repair controller reads the same directory. */
  markKeyDir: string;
  /** Every review answered, in order (the route and meshgate's verdict). */
  reviews: Review[];
  /** Starts the server (again) on the same port and certificate; resolves when its node and pod caches synced. */
  up(): Promise<void>;
  /** Stops the server: the apiserver's calls are refused (connection refused) until up(). */
  down(): Promise<void>;
  isUp(): boolean;
  /** Creates or replaces both webhook configurations. */
  register(policy: { mutating: FailurePolicy; validating: FailurePolicy }): Promise<void>;
}

/**
 * @param config  raw config overrides on top of test/support/config.ts's istio profile (objects merge key by key,
 *                arrays are replaced)
 */
export async function startWebhook(
  cp: ControlPlane,
  dir: string,
  config: Record<string, unknown>,
  mesh: MeshName = 'istio',
): Promise<Webhook> {
  const compiled = testConfig(mesh, { meshNamespace: MESH_NAMESPACE, ...config }); // mesh.ts writes the same for the repair controller
  const port = await freePort();
  const serving = cp.ca.issue({
    commonName: 'meshgate.meshgate.svc',
    dnsNames: ['meshgate.meshgate.svc'],
    ipAddresses: ['127.0.0.1'],
  });
  const certFile = join(dir, 'meshgate-tls.crt');
  const keyFile = join(dir, 'meshgate-tls.key');
  writeFileSync(certFile, serving.certPem);
  writeFileSync(keyFile, serving.keyPem, { mode: 0o600 });
  const markKeyDir = join(dir, 'admission-mark');
  mkdirSync(markKeyDir, { recursive: true });
  writeFileSync(join(markKeyDir, 'key'), generateKey(), { mode: 0o600 });
  const reviews: Review[] = [];
  const url = `https://127.0.0.1:${port}`;
  let server: RunningServer | undefined;
  const api = cp.kc.makeApiClient(AdmissionregistrationV1Api);

  const up = async () => {
    if (server) return;
    server = await startServer({
      config: compiled,
      port,
      host: '127.0.0.1',
      certFile,
      keyFile,
      tlsSans: ['127.0.0.1'],
      kube: daemonClient(cp.kc),
      drainSeconds: 0,
      markKeys: { dir: markKeyDir },
      logger: pino({ level: process.env.MESHGATE_REALNODE_LOG ?? 'warn' }),
      onReview: (route, _body, verdict) => void reviews.push({ route, verdict, at: Date.now() }),
    });
    await server.synced;
  };
  await up();
  return {
    config: compiled,
    url,
    markKeyDir,
    reviews,
    up,
    async down() {
      const s = server;
      server = undefined;
      await s?.shutdown();
    },
    isUp: () => server !== undefined,
    async register(policy) {
      const caBundle = Buffer.from(cp.ca.certPem).toString('base64');
      const { mutating, validating } = chartConfigurations(compiled, url, caBundle, policy);
      await api.deleteMutatingWebhookConfiguration({ name: WEBHOOK_CONFIG_NAME }).catch(() => undefined);
      await api.deleteValidatingWebhookConfiguration({ name: WEBHOOK_CONFIG_NAME }).catch(() => undefined);
      await api.createMutatingWebhookConfiguration({ body: mutating as never });
      await api.createValidatingWebhookConfiguration({ body: validating as never });
    },
  };
}

/** The chart's two configurations (HEAD), pointed at `url`. */
function chartConfigurations(
  c: Compiled,
  url: string,
  caBundle: string,
  policy: { mutating: FailurePolicy; validating: FailurePolicy },
) {
  const namespaceSelector = {
    matchExpressions: [
      { key: 'meshgate.io/inject', operator: 'In', values: ['enabled'] },
      // The chart's meshgate.excludedNamespaces: the release namespace and config.systemNamespaces, whatever the labels say.
      {
        key: 'kubernetes.io/metadata.name',
        operator: 'NotIn',
        values: [c.config.meshNamespace, ...c.config.systemNamespaces],
      },
    ],
  };
  const common = {
    namespaceSelector,
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: 10,
    admissionReviewVersions: ['v1'],
  };
  /** A configuration of one webhook `name`, called at `path` for CREATE of `resources` under `failurePolicy`. */
  const one = (name: string, path: string, resources: string[], failurePolicy: FailurePolicy, extra = {}) => ({
    metadata: { name: WEBHOOK_CONFIG_NAME },
    webhooks: [
      {
        name,
        clientConfig: { url: `${url}${path}`, caBundle },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources, scope: 'Namespaced' }],
        failurePolicy,
        ...extra,
        ...common,
      },
    ],
  });
  return {
    mutating: one('pods.mutate.meshgate.io', '/mutate', ['pods'], policy.mutating, { reinvocationPolicy: 'IfNeeded' }),
    validating: one('pods.validate.meshgate.io', '/validate', ['pods', 'pods/binding'], policy.validating),
  };
}
