/**
 * The cluster the daemons live in during `--footprint`: etcd and kube-apiserver from the e2e harness (no scheduler,
 * controller-manager or kwok: nothing here needs them, and each costs CPU the daemons would miss), and what a small
 * real cluster gives their watches to hold: Nodes, opted-in namespaces with meshgate-labelled pods, meshgate's
 * namespace, and the webhook configurations whose caBundle the webhook keeps. The configurations' object selector
 * matches no pod, so the apiserver never calls a webhook (and inside the bench's netns it could reach only loopback).
 */
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1MutatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { kwokNodeManifest, startControlPlane, type ControlPlane } from '../../test/e2e/harness/index.ts';
import { REDIRECT_LABEL } from '../../src/contract/names.ts';

/** Nodes and pods the watches hold: a small cluster's worth, so each cache holds something without dwarfing the code. */
export const NODES = 20;
export const OPTED_IN_NAMESPACES = 3;
export const PODS_PER_NAMESPACE = 20;

export async function startCluster(): Promise<ControlPlane> {
  return startControlPlane({ withScheduler: false, withControllerManager: false, withKwok: false });
}

/** The objects every daemon set (suffix) shares, and each suffix's own Node and webhook configurations. */
export async function populate(kc: KubeConfig, suffixes: string[]): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (const name of ['meshgate', ...range(OPTED_IN_NAMESPACES).map((i) => `shop-${i}`)]) {
    const labels: Record<string, string> = name === 'meshgate' ? {} : { 'istio-injection': 'enabled' };
    await core.createNamespace({ body: { metadata: { name, labels } } });
    // No controller-manager: the ServiceAccount admission plugin wants `default` to exist before any pod.
    await core.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: 'default' } } });
  }
  for (const i of range(NODES)) await core.createNode({ body: kwokNodeManifest(`fp-worker-${i}`) });
  for (const s of suffixes) await core.createNode({ body: kwokNodeManifest(agentNode(s)) });
  for (const ns of range(OPTED_IN_NAMESPACES)) {
    for (const i of range(PODS_PER_NAMESPACE))
      await core.createNamespacedPod({ namespace: `shop-${ns}`, body: pod(`app-${i}`) });
  }
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  for (const s of suffixes) {
    const config = webhookConfig(webhookConfigName(s));
    await admission.createMutatingWebhookConfiguration({ body: config });
    await admission.createValidatingWebhookConfiguration({ body: config });
  }
}

/** Churn for the watches during the steady minute: a pod created, and the one the previous call created deleted. */
export async function churn(kc: KubeConfig, step: number): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const ns = (i: number) => `shop-${i % OPTED_IN_NAMESPACES}`;
  await core.createNamespacedPod({ namespace: ns(step), body: pod(`churn-${step}`) });
  if (step > 0)
    await core.deleteNamespacedPod({ namespace: ns(step - 1), name: `churn-${step - 1}`, gracePeriodSeconds: 0 });
}

export const agentNode = (suffix: string) => `fp-agent-${suffix}`;
export const webhookConfigName = (suffix: string) => `meshgate-${suffix}`;

function pod(name: string) {
  return {
    metadata: { name, labels: { app: 'shop', [REDIRECT_LABEL]: 'cni' } },
    spec: { containers: [{ name: 'app', image: 'registry.example/shop:1.0', ports: [{ containerPort: 8080 }] }] },
  };
}

function webhookConfig(name: string): V1MutatingWebhookConfiguration {
  return {
    metadata: { name },
    webhooks: [
      {
        name: 'pods.meshgate.io',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Ignore',
        // Loopback only, and selecting no pod: the apiserver never calls it.
        clientConfig: { url: 'https://127.0.0.1:1/mutate' },
        namespaceSelector: { matchLabels: { 'istio-injection': 'enabled' } },
        objectSelector: { matchLabels: { 'meshgate.io/footprint-never': 'true' } },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      },
    ],
  };
}

const range = (n: number) => [...Array(n).keys()];
