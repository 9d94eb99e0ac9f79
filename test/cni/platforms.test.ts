/**
 * Platform CNI files judged on real directories (readSnapshot → verifyChain, and `meshgate check-node`): Cilium's
 * exclusive mode (renames to *.cilium_bak, its own 05-cilium.conflist), AWS VPC CNI's 10-aws.conflist that aws-node
 * rewrites on every start, and check-node's Multus flags. Files: test/cni/fixtures (SOURCES.md) and the shared corpus.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkNodeCommand } from '../../src/cli/check-node.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import type { Runtime } from '../../src/cni/types.ts';
import { verifyChain } from '../../src/cni/verify.ts';
import { corpus, FIXED_NOW, nodeDirs, type NodeDirs } from './helpers.ts';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');
const ISTIO_PLUGIN = (() => {
  const p = JSON.parse(corpus('istio__istio-cni.conf'));
  delete p.cniVersion;
  return p;
})();
/** A list with istio-cni appended, as Istio's installer (insertCNIConfig) appends it. */
function withIstio(conflist: string): string {
  const list = JSON.parse(conflist);
  list.plugins.push(ISTIO_PLUGIN);
  return JSON.stringify(list, null, 2);
}

let dirs: NodeDirs;
afterEach(() => dirs?.cleanup());

function lay(files: Record<string, string>, bins: string[]): NodeDirs {
  dirs = nodeDirs('meshgate-platform-');
  for (const [name, content] of Object.entries(files)) dirs.conf(name, content);
  for (const b of bins) dirs.bin(b);
  return dirs;
}

async function judge(d: NodeDirs, runtime: Runtime = 'containerd', libcni: '1.1' | '1.2' | '1.3' = '1.1') {
  const snapshot = await readSnapshot(d.confDir, [d.binDir]);
  return verifyChain(snapshot, { runtime, libcni, pluginType: 'istio-cni', maxConfNum: 1, now: FIXED_NOW });
}

const CILIUM_BINS = ['cilium-cni', 'calico', 'portmap', 'istio-cni'];

describe('Cilium with cni.exclusive=true', () => {
  it('renamed the mesh’s own file away: renamed_by_cilium, naming it', async () => {
    // Istio's ambient/owned conflist (02-istio-cni.conflist) renamed by Cilium's cleanupOtherCNI.
    const d = lay(
      {
        '05-cilium.conflist': fixture('05-cilium.conflist'),
        '02-istio-cni.conflist.cilium_bak': withIstio(fixture('05-cilium.conflist')),
      },
      CILIUM_BINS,
    );
    for (const runtime of ['containerd', 'crio'] as const) {
      const v = await judge(d, runtime);
      expect(v.reason).toBe('renamed_by_cilium');
      expect(v.evidence.file).toBe('05-cilium.conflist');
      expect(v.evidence.renamed).toEqual(['02-istio-cni.conflist.cilium_bak']);
      expect(v.detail).toBe(
        "Cilium renamed the mesh's file(s) away (02-istio-cni.conflist → 02-istio-cni.conflist.cilium_bak), " +
          'so the runtime no longer loads istio-cni',
      );
    }
  });

  it('rewrote its own file and renamed the primary: renamed_by_cilium (exclusive mode drops what was appended)', async () => {
    const d = lay(
      {
        '05-cilium.conflist': fixture('05-cilium.conflist'),
        '10-calico.conflist.cilium_bak': corpus('istio__calico.conflist'),
      },
      CILIUM_BINS,
    );
    const v = await judge(d);
    expect(v.reason).toBe('renamed_by_cilium');
    expect(v.detail).toContain("the runtime loads Cilium's chain, and Cilium renamed 10-calico.conflist.cilium_bak");
  });

  it('cni.exclusive=false: the installer’s istio-cni stays in 05-cilium.conflist: verified', async () => {
    const d = lay({ '05-cilium.conflist': withIstio(fixture('05-cilium.conflist')) }, CILIUM_BINS);
    const v = await judge(d);
    expect(v.reason).toBe('verified');
    expect(v.evidence.plugins).toEqual(['cilium-cni', 'istio-cni']);
    expect(v.evidence.renamed).toBeUndefined();
  });

  it('Cilium chained onto aws-cni (cni.chainingMode aws-cni, cni.exclusive=false), istio-cni after it: verified', async () => {
    // mergeExistingCNIConfig: the target network with Cilium's chainedCNIEntry appended, written as 05-cilium.conflist.
    const chained = JSON.parse(fixture('10-aws.conflist'));
    chained.plugins.push({
      type: 'cilium-cni',
      'chaining-mode': 'aws-cni',
      'enable-debug': false,
      'log-file': '/var/run/cilium/cilium-cni.log',
      'proxy-routing': false,
    });
    const d = lay(
      { '05-cilium.conflist': withIstio(JSON.stringify(chained)), '10-aws.conflist': fixture('10-aws.conflist') },
      [...CILIUM_BINS, 'aws-cni', 'egress-cni'],
    );
    const v = await judge(d, 'containerd', '1.3');
    expect(v.reason).toBe('verified');
    expect(v.evidence.plugins).toEqual(['aws-cni', 'egress-cni', 'portmap', 'cilium-cni', 'istio-cni']);
  });

  it('leftover *.cilium_bak files but another network without the plugin: the generic mesh_plugin_missing', async () => {
    const d = lay(
      {
        '10-calico.conflist': corpus('istio__calico.conflist'),
        '05-cilium.conflist.cilium_bak': fixture('05-cilium.conflist'),
      },
      CILIUM_BINS,
    );
    const v = await judge(d);
    expect(v.reason).toBe('mesh_plugin_missing');
    expect(v.evidence.renamed).toEqual(['05-cilium.conflist.cilium_bak']);
  });

  it('only <conf file>.cilium_bak counts; other names are not read', async () => {
    const d = lay(
      { '05-cilium.conflist': fixture('05-cilium.conflist'), 'notes.txt.cilium_bak': 'x', 'a.cilium_bak': 'y' },
      CILIUM_BINS,
    );
    const snapshot = await readSnapshot(d.confDir, [d.binDir]);
    expect(snapshot.renamed).toBeUndefined();
    expect((await judge(d)).reason).toBe('mesh_plugin_missing');
  });

  it('check-node says what happened and the fix', async () => {
    const d = lay(
      {
        '05-cilium.conflist': fixture('05-cilium.conflist'),
        '10-calico.conflist.cilium_bak': withIstio(corpus('istio__calico.conflist')),
      },
      CILIUM_BINS,
    );
    const io = memoryIO();
    const code = await checkNodeCommand(
      ['--cni-conf-dir', d.confDir, '--cni-bin-dir', d.binDir, '--plugin-type', 'istio-cni', '--libcni', '1.3'],
      io,
    );
    expect(code).toBe(1);
    expect(io.out).toContain('Renamed by Cilium: 10-calico.conflist.cilium_bak');
    expect(io.out).toContain('NOT VERIFIED (renamed_by_cilium)');
    expect(io.out).toContain('10-calico.conflist → 10-calico.conflist.cilium_bak');
    expect(io.out).toContain('What to do:  Install Cilium with cni.exclusive=false');
    expect(io.out).toContain('docs/platforms/cilium.md');
  });
});

describe('EKS: aws-node writes 10-aws.conflist on every start', () => {
  it.each(['containerd', 'crio'] as const)('the rendered file alone (%s): mesh_plugin_missing', async (runtime) => {
    const d = lay({ '10-aws.conflist': fixture('10-aws.conflist') }, ['aws-cni', 'egress-cni', 'portmap', 'istio-cni']);
    const v = await judge(d, runtime);
    expect(v.reason).toBe('mesh_plugin_missing');
    expect(v.evidence.plugins).toEqual(['aws-cni', 'egress-cni', 'portmap']);
  });

  it('istio-cni appended: verified on every libcni line; aws-node restarting rewrites it: unverified again', async () => {
    const bins = ['aws-cni', 'egress-cni', 'portmap', 'istio-cni'];
    const d = lay({ '10-aws.conflist': withIstio(fixture('10-aws.conflist')) }, bins);
    for (const line of ['1.1', '1.2', '1.3'] as const) {
      const v = await judge(d, 'containerd', line);
      expect(v.reason).toBe('verified');
      expect(v.evidence.plugins).toEqual(['aws-cni', 'egress-cni', 'portmap', 'istio-cni']);
    }
    // cp.CopyFile of the freshly rendered template over the meshed file (cmd/aws-vpc-cni/main.go).
    const tmp = join(d.root, '10-aws.conflist');
    writeFileSync(tmp, fixture('10-aws.conflist'));
    renameSync(tmp, join(d.confDir, '10-aws.conflist'));
    expect((await judge(d)).reason).toBe('mesh_plugin_missing');
  });

  it('the unrendered template (placeholders) is never verified', async () => {
    const template = fixture('10-aws.conflist').replace('"mtu": "9001"', '"mtu": "__MTU__"');
    const d = lay({ '10-aws.conflist': withIstio(template) }, ['aws-cni', 'egress-cni', 'portmap', 'istio-cni']);
    const v = await judge(d);
    expect(v.reason).toBe('unrendered_placeholder');
  });
});

describe('check-node and Multus', () => {
  it('--multus-dir, --multus-path and --multus-network: the OpenShift model, verified', async () => {
    const d = lay({}, ['multus-shim', 'ovn-k8s-cni-overlay', 'istio-cni']);
    const ovn = join(d.root, 'run/multus/cni/net.d');
    const multusDir = join(d.root, 'etc/cni/multus/net.d');
    mkdirSync(ovn, { recursive: true });
    mkdirSync(multusDir, { recursive: true });
    writeFileSync(join(ovn, '10-ovn-kubernetes.conf'), fixture('10-ovn-kubernetes.conf'));
    writeFileSync(join(multusDir, 'istio-cni.conf'), corpus('istio__YYY-istio-cni.conf'));
    writeFileSync(
      join(d.confDir, '00-multus.conf'),
      JSON.stringify({
        cniVersion: '1.1.0',
        name: 'multus-cni-network',
        type: 'multus-shim',
        clusterNetwork: '/host/run/multus/cni/net.d/10-ovn-kubernetes.conf',
      }),
    );
    const io = memoryIO();
    const argv = [
      ...['--cni-conf-dir', d.confDir, '--cni-bin-dir', d.binDir, '--plugin-type', 'istio-cni'],
      ...['--runtime', 'cri-o://1.33.2', '--multus-dir', `${ovn},${multusDir}`],
      ...['--multus-path', `/host/run/multus/cni/net.d=${ovn}`, '--multus-path', `/etc/cni/multus/net.d=${multusDir}`],
      ...['--multus-network', 'default/istio-cni'],
    ];
    expect(await checkNodeCommand(argv, io)).toBe(0);
    expect(io.out).toContain(
      `Multus:      multus-shim runs the pod's network from clusterNetwork "/host/run/multus/cni/net.d/10-ovn-kubernetes.conf" → ${ovn}/10-ovn-kubernetes.conf`,
    );
    expect(io.out).toContain('Chain:       ovn-k8s-cni-overlay');
    expect(io.out).toContain(`Additional:  default/istio-cni (${multusDir}/istio-cni.conf): [istio-cni]`);
    expect(io.out).toContain('VERIFIED (verified)');
  });

  it.each([
    [['--multus-network', 'istio-cni'], /--multus-network must be namespace\/name/],
    [['--multus-path', 'relative=/x'], /--multus-path must be FROM=TO, two absolute paths/],
  ])('usage error: %s', async (flags, err) => {
    const io = memoryIO();
    expect(await checkNodeCommand(['--plugin-type', 'istio-cni', ...flags], io)).toBe(2);
    expect(io.err).toMatch(err);
  });
});
