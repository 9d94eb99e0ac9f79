/**
 * The agent judges by the libcni line of the runtime its own Node reports (status.nodeInfo.containerRuntimeVersion,
 * src/cni/libcni-line.ts): the same dir is verified on one runtime and not on another, a runtime upgraded in place
 * is judged again on the next resync, --libcni names a line, another runtime than --runtime is never verified, and
 * a plugin written into libcni 1.3's per-network plugin dir is seen at once (the agent watches those dirs too).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AgentConfig, NodeAgent } from '../../src/agent/agent.ts';
import { LINE_SPLIT_DIR, nodeDirs } from '../cni/helpers.ts';
import { FakePublisher, memoryLog } from './fake-publisher.ts';
import { agentConfig, perTest } from './config.ts';

/** This test's node dirs and agent, cleaned up after it. */
const t = perTest();

function setup(files: Record<string, string>, overrides: Partial<AgentConfig> = {}): AgentConfig {
  t.dirs = nodeDirs('meshgate-agent-libcni-');
  for (const [n, c] of Object.entries(files)) t.dirs.conf(n, c);
  for (const b of ['bridge', 'istio-cni']) t.dirs.bin(b);
  return agentConfig(t.dirs, { runtime: 'crio', ...overrides });
}

async function start(config: AgentConfig, runtimeVersion?: string): Promise<FakePublisher> {
  const pub = new FakePublisher({ tainted: false, runtimeVersion });
  t.agent = new NodeAgent(config, { publisher: pub, log: memoryLog() });
  await t.agent.start();
  return pub;
}

describe("the agent judges by its Node's libcni line", () => {
  it.each([
    ['cri-o://1.30.2', '1.1', 'mesh_plugin_missing', '20-plain.conflist'],
    ['cri-o://1.31.2', '1.2', 'verified', '10-meshed.conflist'],
    ['cri-o://1.33.1', '1.3', 'verified', '10-meshed.conflist'],
  ])('a node reporting %s is judged by libcni %s: %s', async (runtimeVersion, libcni, reason, file) => {
    const pub = await start(setup(LINE_SPLIT_DIR), runtimeVersion);
    expect(pub.publishes).toHaveLength(1);
    expect(pub.last).toMatchObject({ reason, evidence: { libcni, runtimeVersion, file } });
  });

  it('a node whose runtime version is unknown needs every line to agree, and the evidence says what each read', async () => {
    const pub = await start(setup(LINE_SPLIT_DIR), 'cri-o://1.99.0');
    expect(pub.last).toMatchObject({
      verified: false,
      reason: 'libcni_lines_disagree',
      evidence: { libcni: 'all', runtimeVersion: 'cri-o://1.99.0' },
    });
    expect(pub.last?.evidence.lines).toMatchObject({
      '1.1': { reason: 'mesh_plugin_missing', file: '20-plain.conflist' },
      '1.2': { reason: 'verified', file: '10-meshed.conflist' },
    });
  });

  it('a runtime upgraded in place is judged by its new line on the next resync', async () => {
    const pub = await start(setup(LINE_SPLIT_DIR, { resyncMs: 150 }), 'cri-o://1.30.2');
    expect(pub.last?.reason).toBe('mesh_plugin_missing');
    const upgraded = pub.next((v) => v.verified);
    pub.state = { ...pub.state!, runtimeVersion: 'cri-o://1.31.2' };
    const { verdict } = await upgraded;
    expect(verdict.evidence).toMatchObject({ libcni: '1.2', runtimeVersion: 'cri-o://1.31.2' });
  });

  it('--libcni names the line whatever the Node reports', async () => {
    const pub = await start(setup(LINE_SPLIT_DIR, { libcni: '1.2' }), 'cri-o://1.30.2');
    expect(pub.last).toMatchObject({ verified: true, evidence: { libcni: '1.2' } });
    expect(pub.last?.evidence.runtimeVersion).toBeUndefined();
  });

  it('a Node running another runtime than --runtime is never verified', async () => {
    const meshed = { '10-k8s.conflist': '{"name":"k8s","plugins":[{"type":"bridge"},{"type":"istio-cni"}]}' };
    const pub = await start(setup(meshed, { runtime: 'containerd' }), 'cri-o://1.31.2');
    expect(pub.last).toMatchObject({ verified: false, reason: 'runtime_mismatch' });
    expect(pub.last?.message).toContain('told containerd, the node reports cri-o://1.31.2');
  });

  it("a plugin written into libcni 1.3's per-network plugin dir is seen without a resync", async () => {
    const config = setup({ '10-k8s.conflist': '{"cniVersion":"1.0.0","name":"k8s","plugins":[{"type":"bridge"}]}' });
    const pub = await start({ ...config, runtime: 'containerd' }, 'containerd://2.1.4');
    expect(pub.last).toMatchObject({ reason: 'mesh_plugin_missing', evidence: { libcni: '1.3' } });
    const verified = pub.next((v) => v.verified);
    t.dirs.conf('k8s/10-istio.conf', '{"type":"istio-cni"}');
    expect((await verified).verdict.evidence).toMatchObject({
      plugins: ['bridge', 'istio-cni'],
      pluginFiles: ['k8s/10-istio.conf'],
    });
    const removed = pub.next((v) => !v.verified);
    rmSync(join(t.dirs.confDir, 'k8s', '10-istio.conf'));
    expect((await removed).verdict.reason).toBe('mesh_plugin_missing');
  });
});
