// S8's capability on a real kube-apiserver (issue 13): the repair controller withdraws a node where validator
// failures cluster, and gives it back only after its hold, a fresh node agent verdict and a passing probe pod.
// Everything acts as the chart's service accounts (impersonation), so the chart's RBAC and admission policies apply
// to every real call: two real node agents (src/agent, KubeNodePublisher as the agent SA with its node-name claim)
// on real conf dirs, and the repair controller (startRepair, what `meshgate repair-controller --withdraw-verdicts`
// runs) as the repair SA. Nodes are kwok's: validator failures are written through the pods' status subresource as
// a kubelet would; a probe pod on a kwok node completes its init container with exit 0 (kwok's pod-ready stage), which
// is what a passing validator looks like to the controller. Figures are printed, not asserted (2 shared cores).
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Node, type V1Pod } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeAgent } from '../../src/agent/agent.ts';
import { KubeNodePublisher } from '../../src/agent/kube-publisher.ts';
import { buildConfig } from '../../src/config/load.ts';
import { startNodeCache } from '../../src/kube/node-cache.ts';
import { checkBinding } from '../../src/policy/validate/binding.ts';
import { QUARANTINE_ANNOTATION, QUARANTINE_HISTORY_ANNOTATION } from '../../src/node/quarantine.ts';
import { startRepair, type RunningRepair } from '../../src/repair/run.ts';
import { memoryLog } from '../agent/fake-publisher.ts';
import { corpus, nodeDirs, type NodeDirs } from '../cni/helpers.ts';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { installChart } from './harness/suite.ts';
import { grantClusterRole, impersonate, outcome, serviceAccount, type Identity } from './impersonate.ts';
import { keyDir, markFor } from '../support/mark.ts';
import { daemonClient } from './daemon-client.ts';
import { agentConfig } from '../agent/config.ts';

const NS = 'meshgate';
const APP = 'shop';
const AGENT = serviceAccount(NS, 'meshgate-node-agent');
const REPAIR = serviceAccount(NS, 'meshgate-repair-controller');
const OPS: Identity = { user: 'ops@example.com' };
const VERIFIED = 'meshgate.io/cni-verified';
/** Short for a test, in the defaults' proportions: hold 3 s (default 5 min), agent resync 1.5 s (default 5 min). */
const HOLD_MS = 3_000;
const RESYNC_MS = 1_500;
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const figures: string[] = [];

describe('node quarantine on a real apiserver (S8)', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;
  let repair: RunningRepair;
  const agents: NodeAgent[] = [];
  const dirs: NodeDirs[] = [];
  let owner: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean };
  const as = (who: Identity, node?: string) => impersonate(cp.kc, who, node);
  const config = buildConfig({ mesh: 'istio', meshNamespace: NS });
  // The admission mark's key, as the chart mounts the webhook's Secret; failingPod marks its pods as the webhook would.
  const keys = keyDir();

  beforeAll(async () => {
    cp = await startControlPlane({
      nodes: [
        { name: 'node-a', kubeletVersion: 'v1.34.2' },
        { name: 'node-b', kubeletVersion: 'v1.34.2' },
      ],
    });
    core = cp.kc.makeApiClient(CoreV1Api);
    await installChart(
      cp,
      NS,
      '--set',
      'repairController.withdrawVerdicts=true',
      '--set',
      'repairController.unmeshedPods=off',
    );
    await core.createNamespace({ body: { metadata: { name: APP } } });
    // An operator allowed to patch Nodes (as cluster tooling often is): only the policies stop it.
    await grantClusterRole(
      cp.kc,
      'node-ops',
      [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] }],
      OPS,
    );
    // Policies take effect a moment after they are created: wait until one refuses what it must.
    // On a Node of its own, so a probe that got through early marks no node the test uses.
    let n = 0;
    await core.createNode({ body: { metadata: { name: 'policy-probe' } } });
    await waitFor('the node policies to be enforced', () =>
      outcome(
        as(OPS)
          .makeApiClient(CoreV1Api)
          .patchNode(
            { name: 'policy-probe', body: { metadata: { annotations: { [QUARANTINE_ANNOTATION]: `{"n":${n++}}` } } } },
            merge,
          ),
      ).then((r) => r.includes('ValidatingAdmissionPolicy')),
    );
    const cm = await waitFor('kube-root-ca.crt', () =>
      core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: APP }),
    );
    owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'kube-root-ca.crt', uid: cm.metadata!.uid!, controller: true };
    for (const node of ['node-a', 'node-b']) {
      const d = nodeDirs(`meshgate-e2e-q-${node}-`);
      dirs.push(d);
      d.conf('10-calico.conflist', corpus('istio__10-calico.conflist-istioconfig'));
      for (const b of ['calico', 'portmap', 'istio-cni']) d.bin(b);
      const agent = new NodeAgent(
        agentConfig(d, { nodeName: node, resyncMs: RESYNC_MS, debounceMs: 50, quarantineRecheckMs: 300 }),
        { publisher: new KubeNodePublisher(daemonClient(as(AGENT, node))), log: memoryLog() },
      );
      await agent.start();
      agents.push(agent);
    }
    for (const node of ['node-a', 'node-b']) await nodeSays(node, (x) => x.metadata?.labels?.[VERIFIED] === 'true');
    repair = await startRepair({
      kube: daemonClient(as(REPAIR)),
      config,
      maxDeletesPerMinute: 100,
      dryRun: false,
      markKeyDir: keys.dir,
      logger: pino({ level: process.env.MESHGATE_E2E_LOG ?? 'silent' }),
      quarantine: {
        threshold: 3,
        windowMs: 10 * 60_000,
        holdOff: { baseMs: HOLD_MS, maxMs: 60_000, maxPerHour: 3 },
        taint: false,
        intervalMs: 200,
        probe: { namespace: NS, timeoutMs: 30_000 },
      },
    });
  }, 300_000);

  afterAll(async () => {
    await repair?.stop();
    for (const a of agents) await a.stop();
    for (const d of dirs) d.cleanup();
    await cp?.stop();
    keys.cleanup();
    if (figures.length)
      console.log(
        `node quarantine on a real apiserver (hold ${HOLD_MS} ms, agent resync ${RESYNC_MS} ms):\n  ${figures.join('\n  ')}`,
      );
  });

  async function nodeSays(name: string, pred: (n: V1Node) => boolean | undefined, timeoutMs = 30_000): Promise<V1Node> {
    return waitFor(
      `node ${name}`,
      async () => {
        const n = await core.readNode({ name });
        return pred(n) ? n : false;
      },
      { timeoutMs, intervalMs: 20, describe: () => cp.describe(5) },
    );
  }
  const withdrawn = (n: V1Node) =>
    n.metadata?.labels?.[VERIFIED] === 'false' && n.metadata?.annotations?.[QUARANTINE_ANNOTATION] !== undefined;
  const verified = (n: V1Node) =>
    n.metadata?.labels?.[VERIFIED] === 'true' && n.metadata?.annotations?.[QUARANTINE_ANNOTATION] === undefined;
  const condition = (n: V1Node) => n.status?.conditions?.find((c) => c.type === 'MeshCNIVerified');

  let pods = 0;
  /** A meshgate CNI-mode pod on `node` whose validator then fails, as its kubelet would report it; resolves at the status write. */
  async function failingPod(node: string): Promise<number> {
    const name = `web-${++pods}`;
    const body: V1Pod = {
      metadata: {
        name,
        labels: { app: 'web', 'meshgate.io/redirect': 'cni' },
        annotations: { 'meshgate.io/admitted': markFor(APP, Math.floor(Date.now() / 1000)) },
        ownerReferences: [owner],
      },
      spec: {
        nodeName: node,
        initContainers: [{ name: 'istio-validation', image: 'ghcr.io/meshgate/meshgate:0.1.0' }],
        containers: [{ name: 'app', image: 'nginx' }],
      },
    };
    await core.createNamespacedPod({ namespace: APP, body });
    // kwok first runs it (phase Running): after that, it leaves the status we write alone.
    await waitFor(
      `${name} Running`,
      async () => (await core.readNamespacedPod({ name, namespace: APP })).status?.phase === 'Running',
    );
    const message = JSON.stringify({ reason: 'not_redirected', detail: 'the probe reached 127.0.0.6:15002 itself' });
    await core.patchNamespacedPodStatus(
      {
        name,
        namespace: APP,
        body: {
          status: {
            conditions: [{ type: 'Ready', status: 'False' }],
            initContainerStatuses: [
              {
                name: 'istio-validation',
                image: 'ghcr.io/meshgate/meshgate:0.1.0',
                imageID: '',
                ready: false,
                restartCount: 1,
                state: { terminated: null, waiting: { reason: 'CrashLoopBackOff' } },
                lastState: { terminated: { exitCode: 42, reason: 'Error', message, finishedAt: new Date() } },
              },
            ],
          },
        },
      },
      strategic,
    );
    return Date.now();
  }

  async function nodeEvents(node: string): Promise<string[]> {
    const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${node}` });
    return list.items.filter((e) => e.source?.component === 'meshgate-repair-controller').map((e) => e.reason ?? '');
  }

  it('three failures on node-a withdraw it: mark with the evidence, label false, condition False, an Event; new CNI pods go to node-b', async () => {
    await failingPod('node-a');
    await failingPod('node-a');
    await failingPod('node-b'); // elsewhere: does not count for node-a
    const tNth = await failingPod('node-a');
    await nodeSays('node-a', withdrawn);
    figures.push(
      `3rd failure → node-a withdrawn (mark and label, which the webhook and the scheduler read): ${Date.now() - tNth} ms`,
    );
    // The condition is a second patch (nodes/status), right after.
    const n = await nodeSays('node-a', (x) => condition(x)?.status === 'False');
    figures.push(`3rd failure → condition False too: ${Date.now() - tNth} ms`);
    const mark = JSON.parse(n.metadata!.annotations![QUARANTINE_ANNOTATION]);
    expect(mark).toMatchObject({ failureCount: 3, level: 0, hold: 'hold_off', taint: false });
    expect(mark.failures.map((f: { pod: string; reason: string }) => `${f.pod} ${f.reason}`)).toEqual([
      'shop/web-1 not_redirected',
      'shop/web-2 not_redirected',
      'shop/web-4 not_redirected',
    ]);
    expect(condition(n)).toMatchObject({
      status: 'False',
      reason: 'node_quarantined',
      message: expect.stringContaining('shop/web-4: not_redirected'),
    });
    expect(await nodeSays('node-b', verified)).toBeTruthy();
    expect(
      await waitFor('the Event on node-a', async () => (await nodeEvents('node-a')).includes('NodeVerdictWithdrawn')),
    ).toBe(true);
    // The webhook's node facts (the same watch-fed cache the binding guard reads) refuse CNI pods on node-a.
    const cache = startNodeCache(daemonClient(cp.kc), { pluginType: 'istio-cni', maxVerdictAgeMs: 20 * 60_000 });
    try {
      await cache.ready;
      await waitFor('the cache to see the mark', () => cache.store.get('node-a')?.reason === 'node_quarantined');
      expect(checkBinding('shop/web-9', 'node-a', 'cni', cache.store)).toMatchObject({
        ok: false,
        reason: 'binding_node_unverified',
        message: expect.stringContaining('node_quarantined'),
      });
      expect(checkBinding('shop/web-9', 'node-b', 'cni', cache.store)).toMatchObject({ ok: true });
    } finally {
      cache.reflector.stop();
    }
    // The scheduler, with the required affinity meshgate gives CNI-mode pods, puts every new one on node-b.
    for (let i = 0; i < 4; i++) {
      await core.createNamespacedPod({
        namespace: APP,
        body: {
          metadata: { name: `cni-${i}`, labels: { app: 'cni' } },
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: VERIFIED, operator: 'In', values: ['true'] }] }],
                },
              },
            },
            containers: [{ name: 'app', image: 'nginx' }],
          },
        },
      });
    }
    const placed = await waitFor('4 scheduled', async () => {
      const l = (await core.listNamespacedPod({ namespace: APP, labelSelector: 'app=cni' })).items.map(
        (p) => p.spec?.nodeName,
      );
      return l.every(Boolean) && l.length === 4 ? l : false;
    });
    expect(placed).toEqual(['node-b', 'node-b', 'node-b', 'node-b']);
  }, 120_000);

  it('the node agent’s publishes and heartbeats do not undo it; its policies keep it off the mark', async () => {
    const before = await core.readNode({ name: 'node-a' });
    // A file event makes the agent verify and write again: under the mark it says node_quarantined itself.
    dirs[0].conf(
      '10-calico.conflist',
      corpus('istio__10-calico.conflist-istioconfig').replace('"name"', '"cniVersion": "0.4.0", "name"'),
    );
    const after = await nodeSays(
      'node-a',
      (n) =>
        condition(n)?.message?.includes("the node agent's own verdict") &&
        condition(n)!.lastHeartbeatTime!.getTime() > condition(before)!.lastHeartbeatTime!.getTime(),
    );
    expect(after.metadata!.labels![VERIFIED]).toBe('false');
    expect(after.metadata!.annotations![QUARANTINE_ANNOTATION]).toBe(
      before.metadata!.annotations![QUARANTINE_ANNOTATION],
    );
    const agent = as(AGENT, 'node-a').makeApiClient(CoreV1Api);
    const removed = await outcome(
      agent.patchNode(
        { name: 'node-a', body: { metadata: { annotations: { [QUARANTINE_ANNOTATION]: null } } } },
        merge,
      ),
    );
    expect(removed).toContain('the meshgate node agent may change no annotation but meshgate.io/cni-evidence');
    const ops = as(OPS).makeApiClient(CoreV1Api);
    expect(
      await outcome(
        ops.patchNode(
          { name: 'node-b', body: { metadata: { annotations: { [QUARANTINE_ANNOTATION]: '{}' } } } },
          merge,
        ),
      ),
    ).toContain('may set annotation meshgate.io/cni-quarantine');
  }, 60_000);

  it('given back after the hold, a fresh agent verdict and a passing probe pod; the agent then publishes verified', async () => {
    const n = await core.readNode({ name: 'node-a' });
    const since = Date.parse(JSON.parse(n.metadata!.annotations![QUARANTINE_ANNOTATION]).since);
    const back = await nodeSays('node-a', verified, 60_000);
    figures.push(`withdrawn → given back and verified again: ${Date.now() - since} ms (hold ${HOLD_MS} ms)`);
    expect(condition(back)).toMatchObject({ status: 'True', reason: 'verified' });
    expect(JSON.parse(back.metadata!.annotations![QUARANTINE_HISTORY_ANNOTATION])).toMatchObject({
      withdrawals: [expect.any(String)],
      clearedThrough: expect.any(String),
    });
    expect(await nodeEvents('node-a')).toEqual(
      expect.arrayContaining(['NodeVerdictWithdrawn', 'NodeProbeStarted', 'NodeVerdictRestored']),
    );
    await waitFor('the probe pod removed', () =>
      core.readNamespacedPod({ name: 'meshgate-probe-node-a', namespace: NS }).then(
        () => false,
        () => true,
      ),
    );
  }, 90_000);

  it('a second withdrawal holds twice as long, and a burst within its hold keeps the node withdrawn', async () => {
    for (let i = 0; i < 2; i++) await failingPod('node-a');
    const t2 = await failingPod('node-a');
    const n = await nodeSays('node-a', withdrawn);
    figures.push(`second withdrawal: ${Date.now() - t2} ms after its 3rd failure`);
    const mark = JSON.parse(n.metadata!.annotations![QUARANTINE_ANNOTATION]);
    expect(mark).toMatchObject({ level: 1, failureCount: 3 });
    expect(Date.parse(mark.holdUntil) - Date.parse(mark.since)).toBe(2 * HOLD_MS);
    // A burst well within the 6 s hold (a failing pod takes seconds of its own on a loaded machine).
    await new Promise((r) => setTimeout(r, HOLD_MS / 3));
    const tBurst = await failingPod('node-a');
    const extended = await nodeSays(
      'node-a',
      (x) => withdrawn(x) && JSON.parse(x.metadata!.annotations![QUARANTINE_ANNOTATION]).failureCount === 4,
    );
    const later = JSON.parse(extended.metadata!.annotations![QUARANTINE_ANNOTATION]);
    expect(Date.parse(later.holdUntil)).toBeGreaterThan(Date.parse(mark.holdUntil));
    expect(Date.parse(later.holdUntil)).toBeGreaterThanOrEqual(tBurst + 2 * HOLD_MS - 1_000);
    // Past the first hold's end, still withdrawn.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(mark.holdUntil) + 500 - Date.now())));
    expect(withdrawn(await core.readNode({ name: 'node-a' }))).toBe(true);
    expect(await nodeEvents('node-a')).toContain('NodeQuarantineExtended');
    const back = await nodeSays('node-a', verified, 60_000);
    figures.push(
      `burst within the hold → given back ${Date.now() - tBurst} ms after the burst (hold ${2 * HOLD_MS} ms)`,
    );
    expect(back).toBeTruthy();
  }, 120_000);
});
