/**
 * `meshgate check --pre`'s judges on facts as the reader reduces them: the Kubernetes version and features, the
 * mesh's control plane read from what its real charts render (Istio 1.27's istio-discovery and Linkerd's
 * linkerd-control-plane, by the real helm) against config.recognisedImages, the nodes' runtimes and libcni lines,
 * and existing pods judged as recreated through both webhooks. The e2e test (test/e2e/rollout.test.ts) runs it on
 * the real apiserver next to Istio's real injector.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { NamespaceFacts, WebhookConfig } from '../../src/check/facts.ts';
import { judgeFeatures, judgeKubeVersion, judgeMesh, judgeRuntimes, minorOf } from '../../src/check/judge-preflight.ts';
import { optedInNamespaces } from '../../src/check/judge-namespaces.ts';
import type { PodRecord } from '../../src/check/facts.ts';
import { readLiveIstioInjector, readLinkerdConfig, type MeshSurvey } from '../../src/check/mesh-reader.ts';
import { PreflightTally } from '../../src/check/preflight-pods.ts';
import { chartEntries } from '../../src/check/profile-entries.ts';
import { compileConfig } from '../../src/config/compile.ts';
import { buildConfig } from '../../src/config/load.ts';
import { NodeFactStore } from '../../src/facts/node-facts.ts';
import { helm, KUBE_VERSION, type Obj } from '../chart/helm.ts';
import { findIstioBinaries } from '../e2e/harness/istio.ts';
import { repoRoot } from '../e2e/harness/binaries.ts';
import { testConfig } from '../support/config.ts';
import { istioPod } from '../policy/mutate/fixtures.ts';

const istio = compileConfig(buildConfig({ mesh: 'istio' }));
const withoutLearning = compileConfig(buildConfig({ mesh: 'istio', learnImages: { namespaces: [] } }));

async function rendered(args: string[]): Promise<Obj[]> {
  const r = await helm(['template', ...args, '--kube-version', KUBE_VERSION]);
  if (r.code !== 0) throw new Error(r.stderr);
  return parseAllDocuments(r.stdout).map((d) => d.toJS());
}

describe('the mesh found', () => {
  it('Istio: each revision’s injector ConfigMap, as istio-discovery renders it, and its images', async () => {
    const chart = findIstioBinaries().manifest.discoveryChart;
    const values = join(repoRoot, 'test/istio/values.yaml');
    const injector = async (rev: string, hub?: string) => {
      const docs = await rendered([
        'istiod',
        chart,
        '-n',
        'istio-system',
        '-f',
        values,
        ...(rev === 'default' ? [] : ['--set', `revision=${rev}`]),
        ...(hub ? ['--set', `global.hub=${hub}`] : []),
      ]);
      const cm = docs.find(
        (d) => d?.kind === 'ConfigMap' && String(d.metadata.name).startsWith('istio-sidecar-injector'),
      );
      expect(cm?.metadata.labels['istio.io/rev']).toBe(rev);
      return readLiveIstioInjector('istio-system', cm!.metadata.name, rev, cm!.data.values);
    };
    const def = await injector('default');
    expect(def).toEqual({
      namespace: 'istio-system',
      name: 'istio-sidecar-injector',
      revision: 'default',
      proxyImage: 'docker.io/istio/proxyv2:1.27.0',
    });
    const managed = await injector('asm-1-27', 'gcr.io/gke-release/asm');
    expect(managed).toMatchObject({
      name: 'istio-sidecar-injector-asm-1-27',
      proxyImage: 'gcr.io/gke-release/asm/proxyv2:1.27.0',
    });
    const survey: MeshSurvey = {
      istiods: [
        { namespace: 'istio-system', name: 'istiod', revision: 'default', image: 'docker.io/istio/pilot:1.27.0' },
      ],
      injectors: [def, managed],
      tags: [{ tag: 'prod', revision: 'default' }],
      linkerd: [],
    };
    // With learnImages (the default: istio-system) the webhook trusts what each injector ConfigMap there names.
    const learning = judgeMesh(istio, survey);
    expect(learning).toMatchObject({ status: 'ok', message: '2 Istio revisions found' });
    expect(learning.items![1].message).toMatch(
      /injects proxy gcr\.io\/gke-release\/asm\/proxyv2:1\.27\.0 \(learned from this ConfigMap: learnImages\)$/,
    );
    // Without it, only recognisedImages.
    const r = judgeMesh(withoutLearning, survey);
    expect(r).toMatchObject({ status: 'warn', message: '2 Istio revisions found' });
    expect(r.items!.map((i) => [i.name, i.status])).toEqual([
      ['revision default', 'ok'],
      ['revision asm-1-27', 'warn'],
    ]);
    expect(r.items![0].message).toBe(
      'injector ConfigMap istio-system/istio-sidecar-injector; istiod istio-system/istiod (docker.io/istio/pilot:1.27.0); ' +
        'tags prod; injects proxy docker.io/istio/proxyv2:1.27.0',
    );
    expect(r.items![1].message).toMatch(
      /no istiod Deployment found; injects proxy gcr\.io\/gke-release\/asm\/proxyv2:1\.27\.0, whose repository config\.recognisedImages\.proxy does not list/,
    );
    expect(judgeMesh(withoutLearning, { ...survey, injectors: [def] }).status).toBe('ok');
    expect(judgeMesh(istio, { istiods: [], injectors: [], tags: [], linkerd: [] })).toMatchObject({
      status: 'warn',
      message: 'no istio control plane found (is it installed?)',
    });
    expect(judgeMesh(istio, { ...survey, injectors: { error: 'HTTP 403 Forbidden' } }).message).toBe(
      'no istio control plane found; could not read: HTTP 403 Forbidden',
    );
  });

  it('Linkerd: linkerd-config as the linkerd-control-plane chart renders it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-l5d-'));
    try {
      const vendor = process.env.MESHGATE_VENDOR || join(repoRoot, '..', 'shared', 'vendor');
      cpSync(join(vendor, 'linkerd2', 'charts'), dir, { recursive: true });
      cpSync(join(dir, 'partials'), join(dir, 'linkerd-control-plane', 'charts', 'partials'), { recursive: true });
      const docs = await rendered([
        'l5d',
        join(dir, 'linkerd-control-plane'),
        '-n',
        'linkerd',
        '--show-only',
        'templates/config.yaml',
        '--set',
        'linkerdVersion=edge-25.1.1',
        '--set',
        'identityTrustAnchorsPEM=x,identity.issuer.tls.crtPEM=x,identity.issuer.tls.keyPEM=x',
      ]);
      const l = readLinkerdConfig('linkerd', docs[0].data.values);
      expect(l).toEqual({
        namespace: 'linkerd',
        version: 'edge-25.1.1',
        proxyImage: 'cr.l5d.io/linkerd/proxy:edge-25.1.1',
        cniEnabled: false,
      });
      const linkerd = compileConfig(buildConfig({ mesh: 'linkerd' }));
      const r = judgeMesh(linkerd, { istiods: [], injectors: [], tags: [], linkerd: [l] });
      expect(r).toMatchObject({ status: 'ok', message: 'Linkerd found' });
      expect(r.items![0].message).toBe(
        'Linkerd edge-25.1.1, proxy cr.l5d.io/linkerd/proxy:edge-25.1.1, CNI not enabled',
      );
      expect(readLinkerdConfig('x', 'a: [').error).toMatch(/^data.values is not YAML/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the cluster', () => {
  it('Kubernetes 1.32 or later, and the features meshgate uses', () => {
    expect(minorOf('v1.34.12')).toBe(34);
    expect(minorOf('v1.30.4-eks-1234')).toBe(30);
    expect(minorOf('kwok-v0.8.0')).toBeUndefined();
    expect(judgeKubeVersion('v1.34.12').status).toBe('ok');
    expect(judgeKubeVersion('v1.31.2')).toMatchObject({
      status: 'fail',
      message: 'Kubernetes v1.31.2: meshgate needs 1.32 or later',
    });
    const nodes = [
      { name: 'a', kubeletVersion: 'v1.34.2', containerRuntimeVersion: 'containerd://1.7.27' },
      { name: 'b', kubeletVersion: 'v1.28.9', containerRuntimeVersion: 'cri-o://1.31.2' },
    ];
    const f = judgeFeatures('v1.34.12', ['validatingadmissionpolicies', 'mutatingwebhookconfigurations'], nodes);
    expect(f.status).toBe('warn');
    expect(f.items!.map((i) => [i.name, i.status])).toEqual([
      ['ValidatingAdmissionPolicy', 'ok'],
      ['matchConditions', 'ok'],
      ['native sidecars', 'warn'],
    ]);
    expect(f.items![2].message).toBe('1 node(s) run a kubelet older than 1.29 (no native sidecars): b v1.28.9');
    expect(judgeFeatures('v1.29.1', ['mutatingwebhookconfigurations'], []).status).toBe('fail');
  });

  it('the nodes’ runtimes and the libcni line each implies', () => {
    const r = judgeRuntimes([
      { name: 'a', kubeletVersion: '', containerRuntimeVersion: 'containerd://1.7.27' },
      { name: 'b', kubeletVersion: '', containerRuntimeVersion: 'containerd://1.7.27' },
      { name: 'c', kubeletVersion: '', containerRuntimeVersion: 'cri-o://1.33.1' },
      { name: 'd', kubeletVersion: '', containerRuntimeVersion: 'containerd://9.1.0' },
      { name: 'e', kubeletVersion: '', containerRuntimeVersion: '' },
    ]);
    expect(r).toMatchObject({ status: 'warn', message: '5 nodes, 4 runtime releases, 2 unknown to the libcni table' });
    expect(r.items!.map((i) => [i.name, i.message])).toEqual([
      ['containerd://1.7.27', '2 nodes (a, b): containerd, libcni 1.1'],
      ['cri-o://1.33.1', '1 node (c): crio, libcni 1.3'],
      [
        'containerd://9.1.0',
        '1 node (d): a containerd release the libcni table does not know; judged by every libcni line, which must agree',
      ],
      [
        '(no runtime reported)',
        '1 node (e): a runtime meshgate does not emulate; judged by every libcni line, which must agree',
      ],
    ]);
    expect(judgeRuntimes({ error: 'HTTP 403' }).status).toBe('warn');
  });
});

describe('existing pods, as recreated through both webhooks', () => {
  const cfg = testConfig('istio', { enforcement: { default: 'audit' } });
  const entries = chartEntries(cfg.config);
  const config = (kind: 'mutating' | 'validating'): WebhookConfig => ({ kind, name: 'meshgate', webhooks: entries });
  const namespaces: NamespaceFacts[] = [
    { name: 'shop', labels: { 'istio-injection': 'enabled' } },
    { name: 'pay', labels: { 'istio-injection': 'enabled', 'meshgate.io/enforcement': 'enforce' } },
    { name: 'plain', labels: {} },
  ];
  const opted = optedInNamespaces(namespaces, config('mutating'), config('validating'));
  const facts = new NodeFactStore();
  facts.markSynced();
  const rec = (namespace: string, name: string, object: unknown): PodRecord => ({
    namespace,
    name,
    object,
    labels: (object as { metadata?: { labels?: Record<string, string> } }).metadata?.labels,
    phase: 'Running',
    deleting: false,
    owner: { kind: 'DaemonSet', name: name.split('-')[0] },
  });

  it('would-be refusals by reason with the fix, adjustments with what changes; bound pods judged as rescheduled', () => {
    expect(opted.map((o) => [o.namespace, o.level])).toEqual([
      ['shop', 'audit'],
      ['pay', 'enforce'],
      ['plain', 'audit'], // through istio's pod-level entries: only pods labelled to opt in
    ]);
    const t = new PreflightTally(opted, facts, cfg);
    const injected = istioPod();
    injected.spec.nodeName = 'node-a';
    expect(t.add(rec('shop', 'web-1', injected))).toBe(true);
    const opted_out = istioPod();
    opted_out.metadata!.labels = { 'sidecar.istio.io/inject': 'false' };
    expect(
      t.add(
        rec('pay', 'batch-1', { metadata: opted_out.metadata, spec: { containers: [{ name: 'app', image: 'app' }] } }),
      ),
    ).toBe(true);
    expect(
      t.add(rec('plain', 'other-1', { metadata: {}, spec: { containers: [{ name: 'app', image: 'app' }] } })),
    ).toBe(false);
    const [refused, adjusted] = t.results(new Map());
    expect(refused).toMatchObject({
      code: 'pods_would_refuse',
      status: 'fail',
      message:
        '1 workload runs pods meshgate would refuse when recreated (2 pods judged); 1 of them in namespaces that would be at enforce',
    });
    expect(refused.items).toEqual([
      expect.objectContaining({
        name: 'pay/daemonset/batch',
        status: 'fail',
        reason: 'opt_out_refused',
        message: expect.stringContaining('to fix: remove the pod'),
      }),
    ]);
    expect(adjusted.items).toEqual([
      expect.objectContaining({
        name: 'shop/daemonset/web',
        reason: 'no_verified_node',
        message: expect.stringContaining('redirect mode init'),
      }),
    ]);
  });
});
