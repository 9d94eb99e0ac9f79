/**
 * The node agent on Multus and Cilium nodes (real dirs, fs watches, a fake publisher): it reads and watches Multus'
 * dirs (--multus-dir), follows a thick Multus' clusterNetwork through its path alias, publishes the OpenShift
 * model's additional network in the evidence, and sees at once when the mesh's network file appears in Multus'
 * confDir or when Cilium renames the mesh's file away.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AgentConfig, NodeAgent } from '../../src/agent/agent.ts';
import { corpus, nodeDirs } from '../cni/helpers.ts';
import { FakePublisher, memoryLog } from './fake-publisher.ts';
import { agentConfig, perTest } from './config.ts';

/** This test's node dirs and agent, cleaned up after it. */
const t = perTest();

function config(overrides: Partial<AgentConfig>): AgentConfig {
  return agentConfig(t.dirs, { runtime: 'crio', ...overrides });
}

async function start(c: AgentConfig): Promise<FakePublisher> {
  const pub = new FakePublisher({ tainted: false, runtimeVersion: 'cri-o://1.33.2' });
  t.agent = new NodeAgent(c, { publisher: pub, log: memoryLog() });
  await t.agent.start();
  return pub;
}

describe('Multus', () => {
  it('the OpenShift model: verified once istio-cni.conf appears in Multus’ confDir (a watched dir)', async () => {
    t.dirs = nodeDirs('meshgate-agent-multus-');
    for (const b of ['multus-shim', 'ovn-k8s-cni-overlay', 'istio-cni']) t.dirs.bin(b);
    const ovn = join(t.dirs.root, 'run/multus/cni/net.d');
    const multusDir = join(t.dirs.root, 'etc/cni/multus/net.d');
    mkdirSync(ovn, { recursive: true });
    mkdirSync(multusDir, { recursive: true });
    writeFileSync(
      join(ovn, '10-ovn-kubernetes.conf'),
      '{"cniVersion":"0.4.0","name":"ovn-kubernetes","type":"ovn-k8s-cni-overlay"}',
    );
    t.dirs.conf(
      '00-multus.conf',
      JSON.stringify({
        cniVersion: '1.1.0',
        name: 'multus-cni-network',
        type: 'multus-shim',
        clusterNetwork: '/host/run/multus/cni/net.d/10-ovn-kubernetes.conf',
      }),
    );
    const pub = await start(
      config({
        multusDirs: [ovn, multusDir],
        multus: {
          paths: [
            { from: '/host/run/multus/cni/net.d', to: ovn },
            { from: '/etc/cni/multus/net.d', to: multusDir },
          ],
          network: 'default/istio-cni',
        },
      }),
    );
    expect(pub.last).toMatchObject({ verified: false, reason: 'multus_network_missing' });
    const verified = pub.next((v) => v.verified);
    // Istio's installer writes the file with an atomic rename.
    writeFileSync(join(t.dirs.root, 'istio-cni.conf.tmp'), corpus('istio__YYY-istio-cni.conf'));
    renameSync(join(t.dirs.root, 'istio-cni.conf.tmp'), join(multusDir, 'istio-cni.conf'));
    const { verdict } = await verified;
    expect(verdict.evidence).toMatchObject({
      file: '00-multus.conf',
      plugins: ['ovn-k8s-cni-overlay'],
      multus: {
        type: 'multus-shim',
        by: 'clusterNetwork',
        file: join(ovn, '10-ovn-kubernetes.conf'),
        additional: { network: 'default/istio-cni', file: join(multusDir, 'istio-cni.conf'), plugins: ['istio-cni'] },
      },
    });
  });

  it('a thin Multus whose delegate lacks the plugin: unverified via multus, never advice to delete it', async () => {
    t.dirs = nodeDirs('meshgate-agent-multus-');
    for (const b of ['multus', 'flannel', 'portmap', 'istio-cni']) t.dirs.bin(b);
    t.dirs.conf('00-multus.conf', 'corpus:multus__70-multus.conf');
    const pub = await start(config({}));
    expect(pub.last).toMatchObject({
      reason: 'mesh_plugin_missing',
      evidence: { plugins: ['flannel', 'portmap'], multus: { type: 'multus', by: 'delegates' } },
    });
    expect(pub.last?.message).toContain('via multus → delegates[0]: chain is flannel → portmap');
  });
});

describe('Cilium', () => {
  it('the mesh’s file renamed to *.cilium_bak: renamed_by_cilium at once', async () => {
    t.dirs = nodeDirs('meshgate-agent-cilium-');
    for (const b of ['cilium-cni', 'istio-cni']) t.dirs.bin(b);
    const cilium = '{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni"}]}';
    const meshed = '{"cniVersion":"0.3.1","name":"cilium","plugins":[{"type":"cilium-cni"},{"type":"istio-cni"}]}';
    t.dirs.conf('02-istio-cni.conflist', meshed);
    t.dirs.conf('05-cilium.conflist', cilium);
    const pub = await start(config({}));
    expect(pub.last?.verified).toBe(true);
    const renamed = pub.next((v) => v.reason === 'renamed_by_cilium');
    renameSync(join(t.dirs.confDir, '02-istio-cni.conflist'), join(t.dirs.confDir, '02-istio-cni.conflist.cilium_bak'));
    const { verdict } = await renamed;
    expect(verdict.evidence.renamed).toEqual(['02-istio-cni.conflist.cilium_bak']);
  });
});
