/**
 * The node agent against a real kube-apiserver (test/e2e/harness): real files on disk, the real
 * KubeNodePublisher, a kwok Node whose fake kubelet keeps writing its own status. Measures the time from a file
 * operation to the Node object showing the new label and condition (polled every POLL_MS), and checks what
 * the unit tests cannot: the merge/strategic patches as the apiserver applies them, the kubelet's conditions
 * surviving, the taint's resourceVersion precondition, and a restart writing nothing.
 * Run: npx vitest run test/e2e/node-agent.test.ts (needs the control plane built by scripts/build-controlplane.sh).
 */
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeAgent, type AgentConfig } from '../../src/agent/agent.ts';
import { KubeNodePublisher } from '../../src/agent/kube-publisher.ts';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../../src/agent/node-state.ts';
import { memoryLog } from '../agent/fake-publisher.ts';
import { factFromNode } from '../../src/facts/node-facts.ts';
import { corpus, LINE_SPLIT_DIR, nodeDirs, type NodeDirs } from '../cni/helpers.ts';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { daemonClient } from './daemon-client.ts';
import { agentConfig } from '../agent/config.ts';

const NODE = 'kwok-cni-0';
/** A node whose kubelet reports CRI-O 1.30 (libcni 1.1), for the judgment by libcni line. */
const CRIO_NODE = 'kwok-crio-0';
/** The issue's target, reported with the figures; judged from the medians printed here and by `npm run bench`. */
const TARGET_MS = 1_000;
const POLL_MS = 10;
const MESHED = corpus('istio__10-calico.conflist-istioconfig');
const PRIMARY = corpus('istio__calico.conflist');

let cp: ControlPlane | undefined;
let core: CoreV1Api;
let dirs: NodeDirs;
const figures: Record<string, number[]> = {};

beforeAll(async () => {
  cp = await startControlPlane({
    nodes: [{ name: NODE }, { name: CRIO_NODE, containerRuntimeVersion: 'cri-o://1.30.2' }],
    withScheduler: false,
  });
  core = cp.kc.makeApiClient(CoreV1Api);
  dirs = nodeDirs('meshgate-e2e-agent-');
  for (const b of ['calico', 'portmap', 'istio-cni']) dirs.bin(b);
}, 300_000);

afterAll(async () => {
  await cp?.stop();
  dirs?.cleanup();
  const rows = Object.entries(figures).map(
    ([op, ms]) => `  ${op.padEnd(28)} ${ms.map((m) => `${m.toFixed(0)} ms`).join(', ')}`,
  );
  if (rows.length)
    console.log(
      `disk change → Node object on a real apiserver (debounce 100 ms, poll ${POLL_MS} ms, target < ${TARGET_MS} ms):\n${rows.join('\n')}`,
    );
});

function agentFor(overrides: Partial<AgentConfig> = {}) {
  const config = agentConfig(dirs, { nodeName: NODE, debounceMs: 100, ...overrides });
  return new NodeAgent(config, { publisher: new KubeNodePublisher(daemonClient(cp!.kc)), log: memoryLog() });
}

const says = (label: string, reason: string) => (n: V1Node) =>
  n.metadata?.labels?.[VERIFIED_LABEL] === label &&
  n.status?.conditions?.some((c) => c.type === CONDITION_TYPE && c.reason === reason);

async function nodeUntil(
  what: string,
  pred: (n: V1Node) => boolean | undefined,
  timeoutMs = 10_000,
  name = NODE,
): Promise<V1Node> {
  return waitFor(
    what,
    async () => {
      const n = await core.readNode({ name });
      return pred(n) ? n : false;
    },
    { timeoutMs, intervalMs: POLL_MS, describe: () => cp!.describe(10) },
  );
}

async function measure(name: string, op: () => void, pred: (n: V1Node) => boolean | undefined): Promise<V1Node> {
  const t0 = performance.now();
  op();
  const node = await nodeUntil(name, pred);
  const ms = performance.now() - t0;
  figures[name] = [...(figures[name] ?? []), ms];
  return node;
}

describe('node agent on a real apiserver', () => {
  it('publishes label, condition and evidence, and follows file changes in under a second', async () => {
    const file = join(dirs.confDir, '10-calico.conflist');
    writeFileSync(file, PRIMARY);
    const agent = agentFor();
    try {
      await agent.start();
      const first = await nodeUntil('first verdict', says('false', 'mesh_plugin_missing'));
      const cond = first.status!.conditions!.find((c) => c.type === CONDITION_TYPE)!;
      expect(cond.status).toBe('False');
      expect(cond.message).toContain('file 10-calico.conflist');
      expect(JSON.parse(first.metadata!.annotations![EVIDENCE_ANNOTATION])).toMatchObject({
        file: '10-calico.conflist',
        plugins: ['calico', 'portmap'],
      });
      // The strategic merge patch left kwok's kubelet conditions in place.
      expect(first.status!.conditions!.some((c) => c.type === 'Ready')).toBe(true);

      for (let i = 0; i < 3; i++) {
        const staged = join(dirs.root, 'staged');
        writeFileSync(staged, MESHED);
        const verified = await measure(
          'rename-in → verified',
          () => renameSync(staged, file),
          says('true', 'verified'),
        );
        const c = verified.status!.conditions!.find((x) => x.type === CONDITION_TYPE)!;
        expect(c.status).toBe('True');
        await measure('write → missing', () => writeFileSync(file, PRIMARY), says('false', 'mesh_plugin_missing'));
        await measure('delete → no_config', () => unlinkSync(file), says('false', 'no_config'));
        await measure('create → missing', () => writeFileSync(file, PRIMARY), says('false', 'mesh_plugin_missing'));
      }
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('moves lastTransitionTime only when the status flips', async () => {
    const file = join(dirs.confDir, '10-calico.conflist');
    const cond = (n: V1Node) => n.status!.conditions!.find((c) => c.type === CONDITION_TYPE)!;
    const agent = agentFor();
    try {
      await agent.start();
      const start = cond(await nodeUntil('missing', says('false', 'mesh_plugin_missing')));
      await new Promise((r) => setTimeout(r, 1_100)); // condition times have one-second precision
      const stillFalse = cond(await measure('delete → no_config', () => unlinkSync(file), says('false', 'no_config')));
      expect(stillFalse.lastTransitionTime).toEqual(start.lastTransitionTime);
      expect(stillFalse.lastHeartbeatTime!.getTime()).toBeGreaterThan(start.lastHeartbeatTime!.getTime());
      const flipped = cond(
        await measure('create → verified', () => writeFileSync(file, MESHED), says('true', 'verified')),
      );
      expect(flipped.lastTransitionTime!.getTime()).toBeGreaterThan(start.lastTransitionTime!.getTime());
      await measure('write → missing', () => writeFileSync(file, PRIMARY), says('false', 'mesh_plugin_missing'));
    } finally {
      await agent.stop();
    }
  }, 60_000);

  it('a restart on the unchanged node changes nothing but the heartbeat', async () => {
    const before = await core.readNode({ name: NODE });
    const annotation = before.metadata!.annotations![EVIDENCE_ANNOTATION];
    const cond = (n: V1Node) => n.status!.conditions!.find((c) => c.type === CONDITION_TYPE)!;
    await new Promise((r) => setTimeout(r, 1_100)); // condition times have one-second precision
    const agent = agentFor();
    try {
      await agent.start();
      expect(agent.lastVerdict?.reason).toBe('mesh_plugin_missing');
    } finally {
      await agent.stop();
    }
    const after = await core.readNode({ name: NODE });
    expect(after.metadata!.annotations![EVIDENCE_ANNOTATION]).toBe(annotation);
    expect({ ...cond(after), lastHeartbeatTime: undefined }).toEqual({ ...cond(before), lastHeartbeatTime: undefined });
    expect(cond(after).lastHeartbeatTime!.getTime()).toBeGreaterThan(cond(before).lastHeartbeatTime!.getTime());
  }, 60_000);

  it("re-stamps the heartbeat on every resync through nodes/status, leaving the kubelet's conditions alone", async () => {
    const cond = (n: V1Node) => n.status!.conditions!.find((c) => c.type === CONDITION_TYPE)!;
    const agent = agentFor({ resyncMs: 1_500 });
    try {
      await agent.start();
      const first = await core.readNode({ name: NODE });
      const later = await nodeUntil(
        'a later heartbeat',
        (n) => cond(n).lastHeartbeatTime!.getTime() >= cond(first).lastHeartbeatTime!.getTime() + 2_000,
        15_000,
      );
      expect(cond(later).lastTransitionTime).toEqual(cond(first).lastTransitionTime);
      expect(cond(later).reason).toBe(cond(first).reason);
      expect(later.status!.conditions!.map((c) => c.type)).toEqual(first.status!.conditions!.map((c) => c.type));
    } finally {
      await agent.stop();
    }
  }, 60_000);

  it('--taint-unverified adds the taint while unverified and removes it when verified, keeping other taints', async () => {
    const other = { key: 'dedicated', value: 'mesh', effect: 'NoSchedule' };
    const n = await core.readNode({ name: NODE });
    const taints = [...(n.spec?.taints ?? []).map((t) => ({ key: t.key, value: t.value, effect: t.effect })), other];
    await core.patchNode(
      { name: NODE, body: { spec: { taints } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const agent = agentFor({ taintUnverified: true });
    const ours = (node: V1Node) =>
      (node.spec?.taints ?? []).some((t) => t.key === UNVERIFIED_TAINT.key && t.effect === 'NoSchedule');
    try {
      await agent.start();
      const tainted = await nodeUntil('taint added', ours);
      expect(tainted.spec!.taints).toContainEqual(expect.objectContaining(other));
      const file = join(dirs.confDir, '10-calico.conflist');
      const clean = await measure(
        'verified → taint removed',
        () => writeFileSync(file, MESHED),
        (node) => !ours(node) && says('true', 'verified')(node),
      );
      expect(clean.spec!.taints).toContainEqual(expect.objectContaining(other));
    } finally {
      await agent.stop();
    }
  }, 60_000);

  it("judges by the libcni line of the runtime its Node reports, and again after the runtime's upgrade in place", async () => {
    const crio = nodeDirs('meshgate-e2e-agent-crio-');
    for (const [name, content] of Object.entries(LINE_SPLIT_DIR)) crio.conf(name, content);
    for (const b of ['bridge', 'istio-cni']) crio.bin(b);
    const config = agentConfig(crio, { nodeName: CRIO_NODE, runtime: 'crio', resyncMs: 400, debounceMs: 100 });
    const agent = new NodeAgent(config, { publisher: new KubeNodePublisher(daemonClient(cp!.kc)), log: memoryLog() });
    const read = () => core.readNode({ name: CRIO_NODE });
    const evidenceOf = (n: V1Node) => JSON.parse(n.metadata!.annotations![EVIDENCE_ANNOTATION]);
    const reportRuntime = (containerRuntimeVersion: string) =>
      core.patchNodeStatus(
        { name: CRIO_NODE, body: { status: { nodeInfo: { containerRuntimeVersion } } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    try {
      await agent.start();
      // CRI-O 1.30's libcni 1.1 refuses the meshed file's string disableCheck and loads the plain file after it.
      const old = await nodeUntil(
        'CRI-O 1.30 judged by libcni 1.1',
        (n) => n.metadata?.annotations?.[EVIDENCE_ANNOTATION] !== undefined,
        10_000,
        CRIO_NODE,
      );
      expect(old.metadata!.labels![VERIFIED_LABEL]).toBe('false');
      expect(evidenceOf(old)).toMatchObject({
        libcni: '1.1',
        runtimeVersion: 'cri-o://1.30.2',
        file: '20-plain.conflist',
      });
      await reportRuntime('cri-o://1.31.2');
      const upgraded = await nodeUntil('CRI-O 1.31 judged by libcni 1.2', says('true', 'verified'), 10_000, CRIO_NODE);
      expect(evidenceOf(upgraded)).toMatchObject({
        libcni: '1.2',
        runtimeVersion: 'cri-o://1.31.2',
        file: '10-meshed.conflist',
      });
    } finally {
      await agent.stop();
      crio.cleanup();
    }
    // With the agent gone, a runtime of another line makes the webhook's reading unverified at once.
    await reportRuntime('cri-o://1.30.9');
    const fact = factFromNode(await read(), { pluginType: 'istio-cni', maxVerdictAgeMs: 600_000 });
    expect(fact).toMatchObject({ verified: false, reason: 'runtime_changed' });
  });
});
