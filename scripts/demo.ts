/**
 * `npm run demo`: meshgate in a real (local) cluster. Starts the control plane built from Go modules (etcd,
 * kube-apiserver, controller-manager, scheduler, kwok), one verified and one unverified fake node, registers
 * meshgate's webhooks, deploys a workload into an opted-in namespace and prints what happened. Then it waits,
 * printing how to poke at it with kubectl, until Ctrl-C; everything is torn down on exit.
 */
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startControlPlane, waitForPodsRunning } from '../test/e2e/harness/index.ts';
import { isolateThisRun } from '../test/support/isolation.ts';
import {
  apiError,
  createNamespace,
  names,
  publishVerdict,
  restrictedPod,
  startMeshgate,
} from '../test/e2e/meshgate.ts';

const say = (s: string) => process.stdout.write(`${s}\n`);
// The cluster lives in a network namespace of its own that holds only lo (issue 21): the demo re-executes itself
// under `unshare --net`, so a shell outside reaches it through nsenter (printed below).
await isolateThisRun('demo');

say('[demo] starting etcd, kube-apiserver, controller-manager, scheduler and kwok on loopback…');
const cp = await startControlPlane({
  nodes: [
    { name: 'node-verified', kubeletVersion: 'v1.34.12' },
    { name: 'node-unverified', kubeletVersion: 'v1.34.12' },
  ],
});
// kwok nodes run no CNI, so no node agent can verify them: the demo publishes the verdicts an agent would (label,
// MeshCNIVerified condition, evidence) and refreshes their heartbeat as the agent's resync does.
const publish = () =>
  Promise.all([publishVerdict(cp, 'node-verified', true), publishVerdict(cp, 'node-unverified', false)]);
await publish();
const heartbeat = setInterval(
  () => void publish().catch((err) => say(`[demo] heartbeat failed: ${apiError(err)}`)),
  30_000,
);
const mg = await startMeshgate(cp);
const stop = async () => {
  clearInterval(heartbeat);
  await mg.stop();
  await cp.stop();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

try {
  await mg.register();
  say(`[demo] meshgate listening on ${mg.server.url}, registered with the apiserver at ${cp.server}`);
  await createNamespace(cp, 'shop', { 'meshgate.io/inject': 'enabled' });
  await cp.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: 'shop',
    body: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: restrictedPod('web').spec },
      },
    } as never,
  });
  for (const p of await waitForPodsRunning(cp.kc, 'shop', 'app=web', 2, { timeoutMs: 90_000 })) {
    const status = JSON.parse(p.metadata!.annotations!['meshgate.io/status']);
    say(
      `[demo] pod ${p.metadata!.name} Running on ${p.spec!.nodeName}: init ${names(p).init.join(', ')}; mode ${status.mode} (${status.reason})`,
    );
  }
  const err = await cp.kc
    .makeApiClient(CoreV1Api)
    .createNamespacedPod({ namespace: 'shop', body: restrictedPod('pinned', { nodeName: 'node-unverified' }) })
    .catch((e) => e);
  say(`[demo] a pod pinned to node-unverified is refused:\n       ${apiError(err)}`);
  const enter = `nsenter --target ${process.pid} --net${process.getuid?.() === 0 ? '' : ' --user --preserve-credentials'}`;
  say(`\n[demo] try: ${enter} ${cp.binDir}/kubectl --kubeconfig ${cp.kubeconfigPath} get pods -n shop -o wide`);
  say('[demo] Ctrl-C stops everything.');
  if (process.env.CI) await stop();
} catch (err) {
  say(`[demo] failed: ${apiError(err)}\n${cp.describe(20)}`);
  clearInterval(heartbeat);
  await mg.stop();
  await cp.stop();
  process.exit(1);
}
