/**
 * Every real CNI file of the shared corpus, alone in the conf dir under the name an installer would give it,
 * with every plugin binary installed: what containerd and CRI-O make of it, and the mesh installers'
 * before/after pairs.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CniReasonCode } from '../../src/cni/reasons.ts';
import { verifyChain } from '../../src/cni/verify.ts';
import { corpus, CORPUS_DIR, FIXED_NOW, memorySnapshot } from './helpers.ts';

type Row = { source: string; as: string; mesh?: string; containerd: CniReasonCode; crio: CniReasonCode };

// prettier-ignore
const ALONE: Row[] = [
  {
    source: 'calico__10-calico.conflist.rendered',
    as: '10-calico.conflist',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'calico__10-calico.conflist.template',
    as: '10-calico.conflist',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'calico__calico-go-with-host-local.json',
    as: '10-calico.json',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'containernetworking-plugins__basic-ptp.json',
    as: '10-ptp.json',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'containernetworking-plugins__network-chain-test.conflist',
    as: '10-chain.conflist',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'containernetworking-plugins__network-chain-test.json',
    as: '10-chain.json',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'flannel__10-flannel.conflist',
    as: '10-flannel.conflist',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'istio__10-calico.conflist-istioconfig',
    as: '10-calico.conflist',
    containerd: 'verified',
    crio: 'verified',
  },
  {
    source: 'istio__YYY-istio-cni.conf',
    as: 'YYY-istio-cni.conf',
    containerd: 'mesh_plugin_not_chained',
    crio: 'mesh_plugin_not_chained',
  },
  {
    source: 'istio__bad_minikube_cni.conf',
    as: '10-bridge.conf',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'istio__bridge.conf',
    as: '10-bridge.conf',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  { source: 'istio__bridge.conf.golden', as: '10-bridge.conflist', containerd: 'verified', crio: 'verified' },
  // A conflist saved with the .conf extension is read as a single plugin without "type".
  {
    source: 'istio__bridge.conf.golden',
    as: '10-bridge.conf',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'istio__calico.conflist',
    as: '10-calico.conflist',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'istio__invalid-arr.conflist',
    as: '10-x.conflist',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'istio__invalid-map.conflist',
    as: '10-x.conflist',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'istio__istio-cni-prefixed.conf',
    as: '02-istio-cni.conf',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'istio__istio-cni.conf',
    as: '02-istio-cni.conf',
    containerd: 'mesh_plugin_not_chained',
    crio: 'mesh_plugin_not_chained',
  },
  {
    source: 'istio__istio-cni.conf.template',
    as: '02-istio-cni.conf',
    containerd: 'mesh_plugin_not_chained',
    crio: 'mesh_plugin_not_chained',
  },
  {
    source: 'istio__istio-owned-bridge.conflist.golden',
    as: '02-istio-cni.conflist',
    containerd: 'verified',
    crio: 'verified',
  },
  {
    source: 'istio__istio-owned.conflist.golden',
    as: '02-istio-cni.conflist',
    containerd: 'verified',
    crio: 'verified',
  },
  {
    source: 'istio__list-no-istio.conflist',
    as: '10-list.conflist',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  { source: 'istio__list-with-istio.conflist', as: '10-list.conflist', containerd: 'verified', crio: 'verified' },
  {
    source: 'istio__list-with-istio.conflist.golden',
    as: '10-list.conflist',
    containerd: 'verified',
    crio: 'verified',
  },
  {
    source: 'istio__list.conflist',
    as: '10-list.conflist',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  { source: 'istio__list.conflist.golden', as: '10-list.conflist', containerd: 'verified', crio: 'verified' },
  {
    source: 'istio__minikube_cni.conf',
    as: '10-minikube.conf',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'istio__minikube_cni.conflist.clean',
    as: '10-minikube.conflist',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'istio__minikube_cni.conflist.expected',
    as: '10-minikube.conflist',
    containerd: 'verified',
    crio: 'verified',
  },
  { source: 'istio__non_json.conf', as: '10-x.conf', containerd: 'unparsable_first_file', crio: 'no_valid_config' },
  {
    source: 'istio__noname_calico.conflist',
    as: '10-calico.conflist',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'istio__noplugins_calico.conflist',
    as: '10-calico.conflist',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  // No cniVersion is not a load error for libcni.
  {
    source: 'istio__nover_calico.conflist',
    as: '10-calico.conflist',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'linkerd__10-calico-exp.conflist',
    as: '10-calico.conflist',
    mesh: 'linkerd-cni',
    containerd: 'unrendered_placeholder',
    crio: 'unrendered_placeholder',
  },
  {
    source: 'linkerd__10-calico-linkerd.conflist',
    as: '10-calico.conflist',
    mesh: 'linkerd-cni',
    containerd: 'mesh_plugin_not_chained',
    crio: 'mesh_plugin_not_chained',
  },
  {
    // No name: containerd's ADD refuses the empty name; CRI-O (ocicni) names the network after its file.
    source: 'linkerd__10-calico.conf',
    as: '10-calico.conf',
    mesh: 'linkerd-cni',
    containerd: 'invalid_network_name',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'linkerd__10-calico.conflist',
    as: '10-calico.conflist',
    mesh: 'linkerd-cni',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'linkerd__cni-exp.json',
    as: '01-linkerd-cni.json',
    mesh: 'linkerd-cni',
    containerd: 'mesh_plugin_not_chained',
    crio: 'mesh_plugin_not_chained',
  },
  {
    source: 'linkerd__cni-invalid-plugin.json',
    as: '10-x.json',
    mesh: 'linkerd-cni',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'linkerd__cni-invalid-plugin.json',
    as: '10-x.conflist',
    mesh: 'linkerd-cni',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'linkerd__cni-no-plugins.json',
    as: '10-x.json',
    mesh: 'linkerd-cni',
    containerd: 'unparsable_first_file',
    crio: 'no_valid_config',
  },
  {
    source: 'linkerd__cni-src.json',
    as: '01-linkerd-cni.json',
    mesh: 'linkerd-cni',
    containerd: 'mesh_plugin_not_chained',
    crio: 'mesh_plugin_not_chained',
  },
  // Multus delegates are not followed: the chain the runtime runs is [multus], the mesh plugin is not in it.
  {
    source: 'multus__00-multus.conf',
    as: '00-multus.conf',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
  {
    source: 'multus__70-multus.conf',
    as: '70-multus.conf',
    containerd: 'mesh_plugin_missing',
    crio: 'mesh_plugin_missing',
  },
];

describe('each corpus file alone', () => {
  it('covers every file of the corpus', () => {
    const files = readdirSync(CORPUS_DIR).filter((f) => f !== 'SOURCES.tsv');
    expect(new Set(ALONE.map((r) => r.source))).toEqual(new Set(files));
  });

  it.each(
    ALONE.flatMap((r) => (['containerd', 'crio'] as const).map((runtime) => ({ ...r, runtime, want: r[runtime] }))),
  )('$source as $as under $runtime → $want', ({ source, as, mesh, runtime, want }) => {
    const snapshot = memorySnapshot({ [as]: corpus(source) });
    const v = verifyChain(snapshot, {
      runtime,
      libcni: '1.1',
      pluginType: mesh ?? 'istio-cni',
      maxConfNum: 1,
      now: FIXED_NOW,
    });
    expect(v.reason).toBe(want);
    expect(v.verified).toBe(want === 'verified');
    expect(v.evidence.checkedAt).toBe('2025-01-02T03:04:05.678Z');
    if (runtime === 'crio' && want === 'no_valid_config')
      expect(v.evidence.candidates).toEqual([expect.objectContaining({ file: as, outcome: 'unparsable' })]);
  });

  it('ignores a file whose extension is not .conf/.conflist/.json (the corpus names as shipped)', () => {
    const v = verifyChain(memorySnapshot({ 'istio__list.conflist.golden': corpus('istio__list.conflist.golden') }), {
      runtime: 'containerd',
      libcni: '1.1',
      pluginType: 'istio-cni',
      maxConfNum: 1,
    });
    expect(v.reason).toBe('no_config');
  });
});

describe('mesh installer before/after pairs', () => {
  // prettier-ignore
  const PAIRS = [
    {
      before: 'istio__list.conflist',
      after: 'istio__list.conflist.golden',
      mesh: 'istio-cni',
      chain: ['bridge', 'tuning', 'istio-cni'],
    },
    // Istio's installer converts a .conf into a .conflist beside it (and removes the .conf).
    {
      before: 'istio__bridge.conf',
      beforeAs: '10-primary.conf',
      after: 'istio__bridge.conf.golden',
      mesh: 'istio-cni',
      chain: ['bridge', 'istio-cni'],
    },
    {
      before: 'istio__calico.conflist',
      after: 'istio__10-calico.conflist-istioconfig',
      mesh: 'istio-cni',
      chain: ['calico', 'portmap', 'istio-cni'],
    },
    {
      before: 'istio__minikube_cni.conflist.clean',
      after: 'istio__minikube_cni.conflist.expected',
      mesh: 'istio-cni',
      chain: ['bridge', 'istio-cni'],
    },
    {
      before: 'istio__list-no-istio.conflist',
      after: 'istio__list-with-istio.conflist.golden',
      mesh: 'istio-cni',
      chain: ['bridge', 'tuning', 'istio-cni'],
    },
    {
      before: 'linkerd__10-calico.conflist',
      after: 'linkerd__10-calico-exp.conflist',
      mesh: 'linkerd-cni',
      chain: ['calico', 'portmap', 'linkerd-cni'],
      render: true,
    },
  ];

  it.each(PAIRS)('$before → $after', ({ before, beforeAs, after, mesh, chain, render }) => {
    const opts = { runtime: 'containerd' as const, libcni: '1.1' as const, pluginType: mesh, maxConfNum: 1 };
    const name = '10-primary.conflist';
    const b = verifyChain(memorySnapshot({ [beforeAs ?? name]: corpus(before) }), opts);
    expect(b.reason).toBe('mesh_plugin_missing');
    // Linkerd's expected output keeps its Go-template kubeconfig; an installed file has it rendered.
    const text = render
      ? corpus(after).replace('{{ .KubeConfigFilename }}', '/etc/cni/net.d/ZZZ-linkerd-cni-kubeconfig')
      : corpus(after);
    const a = verifyChain(memorySnapshot({ [name]: text }), opts);
    expect(a.reason).toBe('verified');
    expect(a.evidence.plugins).toEqual(chain);
    expect(a.evidence.sha256).not.toBe(b.evidence.sha256);
  });

  it('linkerd-cni written in FIRST position (10-calico-linkerd.conflist) is not chained', () => {
    const v = verifyChain(memorySnapshot({ '10-calico.conflist': corpus('linkerd__10-calico-linkerd.conflist') }), {
      runtime: 'containerd',
      libcni: '1.1',
      pluginType: 'linkerd-cni',
      maxConfNum: 1,
    });
    expect(v).toMatchObject({
      verified: false,
      reason: 'mesh_plugin_not_chained',
      detail: 'linkerd-cni runs first, before calico',
    });
    expect(v.evidence.plugins).toEqual(['linkerd-cni', 'calico', 'portmap']);
  });

  it('the mesh plugin type is matched exactly (prefix-istio-cni is not istio-cni)', () => {
    const text = corpus('istio__list.conflist.golden').replace('"type": "istio-cni"', '"type": "prefix-istio-cni"');
    const v = verifyChain(memorySnapshot({ '10-list.conflist': text }), {
      runtime: 'containerd',
      libcni: '1.1',
      pluginType: 'istio-cni',
      maxConfNum: 1,
    });
    expect(v.reason).toBe('mesh_plugin_missing');
  });
});
