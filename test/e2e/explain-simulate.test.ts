/**
 * `meshgate explain` in front of the mesh's injector (issue 34 §5), against Istio's REAL injector (istio.io/istio
 * 1.27.0's pkg/kube/inject, test/e2e/harness startIstioInjector) on a real kube-apiserver:
 *   1. the simulation (src/mesh/simulate) over every pod template of shared/corpus/manifests matches what the real
 *      injector returns, field by field for what meshgate judges — the mesh containers' image, command, args,
 *      environment (names, where each value comes from, the values meshgate reads), ports, probes, hooks, security
 *      context, mounts and the volumes behind them, the order of every container, and the annotations and labels the
 *      profile reads — and meshgate's decision on both is the same; for two renderings of the chart (native sidecars
 *      from the nodes' kubelets; istio-cni with native sidecars off);
 *   2. live `explain deploy/X` simulates the injector from the cluster's ConfigMaps and exits 5 on a refusal;
 *      offline `explain -f` does the same from `--mesh-config` (the ConfigMaps as kubectl writes them).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as explain } from '../../src/cli/explain.ts';
import { withLearnedConfigMaps } from '../../src/cli/explain-live.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { compileConfig } from '../../src/config/compile.ts';
import { buildConfig } from '../../src/config/load.ts';
import { NodeFactStore } from '../../src/facts/node-facts.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import {
  readIstioInjector,
  STOCK_SIDECAR_TEMPLATE_SHA256,
  sidecarTemplateSha,
} from '../../src/mesh/simulate/istio-config.ts';
import { simulateIstio } from '../../src/mesh/simulate/istio-inject.ts';
import type { PodJson } from '../../src/mesh/simulate/types.ts';
import { parsePod } from '../../src/pod/parse.ts';
import { parse as parseYaml } from 'yaml';
import { startControlPlane, startIstioInjector, type ControlPlane, type IstioInjector } from './harness/index.ts';
import { CONTAINER_FIELDS, corpus, goShape, realInject } from './simulate-support.ts';

type Obj = Record<string, unknown>;
const MESH_CONTAINERS = ['istio-proxy', 'istio-init', 'istio-validation'];
/** Fields of the mesh's containers meshgate's contracts judge (src/policy/judge/istio.ts), env aside. */
const JUDGED = [...CONTAINER_FIELDS, 'resources', 'imagePullPolicy'];
/** PROXY_CONFIG fields the contract pins (src/policy/judge/istio-env.ts), and the metadata it reads. */
const PINNED = [
  'binaryPath',
  'customConfigFile',
  'proxyBootstrapTemplatePath',
  'configPath',
  'interceptionMode',
  'discoveryAddress',
  'proxyMetadata',
];
/** Variables whose value meshgate reads; every other literal is judged only as a literal. */
const VALUED = ['ISTIO_META_INTERCEPTION_MODE', 'DISABLE_ENVOY', 'ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR'];

let cp: ControlPlane;
let native: IstioInjector;
let cni: IstioInjector;
let core: CoreV1Api;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'meshgate-simulate-'));
  cp = await startControlPlane({ nodes: [{ name: 'node-a', kubeletVersion: 'v1.34.2' }] });
  core = cp.kc.makeApiClient(CoreV1Api);
  native = await startIstioInjector(cp, { logLevel: 'warn' });
  cni = await startIstioInjector(cp, {
    logLevel: 'warn',
    // istiod takes ENABLE_NATIVE_SIDECARS from its environment, which the chart sets from pilot.env.
    values: { pilot: { cni: { enabled: true }, env: { ENABLE_NATIVE_SIDECARS: 'false' } } },
    env: { ENABLE_NATIVE_SIDECARS: 'false' },
  });
}, 300_000);

afterAll(async () => {
  await native?.stop();
  await cni?.stop();
  await cp?.stop();
  rmSync(work, { recursive: true, force: true });
});

function injectorOf(istio: IstioInjector) {
  const inj = readIstioInjector(
    { name: 'istio-sidecar-injector', namespace: 'istio-system' },
    parseYaml(istio.rendered.injectorConfig),
    JSON.parse(istio.rendered.injectorValues),
    parseYaml(istio.rendered.mesh),
  );
  if ('problem' in inj) throw new Error(inj.problem);
  return inj;
}

/** What meshgate judges of an injected pod, as one comparable value. */
function judged(pod: Obj): Obj {
  const spec = pod.spec as Obj;
  const meta = (pod.metadata ?? {}) as Obj;
  const lists = { initContainers: (spec.initContainers ?? []) as Obj[], containers: (spec.containers ?? []) as Obj[] };
  const out: Obj = { order: Object.fromEntries(Object.entries(lists).map(([k, l]) => [k, l.map((c) => c.name)])) };
  const volumes = new Map(((spec.volumes ?? []) as Obj[]).map((v) => [v.name as string, v]));
  for (const [list, cs] of Object.entries(lists))
    for (const c of cs.filter((c) => MESH_CONTAINERS.includes(c.name as string))) {
      const view: Obj = { list };
      for (const f of JUDGED) if (c[f] !== undefined) view[f] = c[f];
      view.env = Object.fromEntries(
        ((c.env ?? []) as Obj[]).map((e) => {
          if (e.valueFrom) return [e.name, e.valueFrom];
          if (e.name === 'PROXY_CONFIG') {
            const pc = JSON.parse(e.value as string) as Obj;
            return [e.name, Object.fromEntries(PINNED.filter((k) => pc[k] !== undefined).map((k) => [k, pc[k]]))];
          }
          return [e.name, VALUED.includes(e.name as string) ? e.value : '<literal>'];
        }),
      );
      view.volumes = ((c.volumeMounts ?? []) as Obj[]).map((m) => volumes.get(m.name as string) ?? `missing ${m.name}`);
      out[c.name as string] = view;
    }
  const ann = (meta.annotations ?? {}) as Record<string, string>;
  out.annotations = Object.fromEntries(
    Object.entries(ann)
      .filter(([k]) => /^(traffic\.sidecar\.istio\.io|sidecar\.istio\.io|istio\.io|prometheus\.io)\//.test(k))
      .map(([k, v]) => [k, k === 'sidecar.istio.io/status' ? JSON.parse(v) : v]),
  );
  out.labels = Object.fromEntries(Object.entries((meta.labels ?? {}) as Obj).filter(([k]) => /istio\.io\//.test(k)));
  return out;
}

describe('the simulation against the real injector', () => {
  it('the rendered chart’s sidecar template is the one the simulation follows', () => {
    const templates = (parseYaml(native.rendered.injectorConfig) as { templates: Record<string, string> }).templates;
    expect(sidecarTemplateSha(templates.sidecar)).toBe(STOCK_SIDECAR_TEMPLATE_SHA256);
    expect(injectorOf(native).stockSidecar).toBe(true);
  });

  it.each([
    ['native sidecars (every kubelet ≥ 1.33)', () => native, true],
    ['istio-cni, native sidecars off', () => cni, false],
  ])('field by field over every corpus template: %s', async (_name, istio, nativeSidecars) => {
    const inj = injectorOf(istio());
    const cfg = withLearnedConfigMaps(compileConfig(buildConfig({ mesh: 'istio' }, '--mesh')), [
      {
        metadata: { name: 'istio-sidecar-injector', namespace: 'istio-system' },
        data: { config: istio().rendered.injectorConfig, values: istio().rendered.injectorValues },
      },
    ]);
    const nodes = new NodeFactStore();
    nodes.markSynced();
    let compared = 0;
    const refused: string[] = [];
    const notSimulated: string[] = [];
    for (const c of corpus()) {
      const real = await realInject(istio(), cp.ca.certPem, c.pod, 'mesh');
      const sim = simulateIstio(inj, goShape(c.pod) as PodJson, { namespace: 'mesh', nativeSidecars, owner: c.owner });
      if (real.refused) {
        refused.push(`${c.where}: ${real.refused.split('\n')[0].slice(0, 160)}`);
        // A template the injector lacks: the simulation says istiod fails, rather than inventing an injection.
        if (/requested template .* not found/.test(real.refused)) expect(sim.kind, c.where).toBe('unavailable');
        continue;
      }
      if (!real.pod) {
        expect(sim.kind, c.where).toBe('not-injected');
        continue;
      }
      // A template other than sidecar (inject.istio.io/templates) is not simulated, and the answer says so.
      if (sim.kind === 'unavailable') {
        expect(sim.why, c.where).toMatch(/is not simulated \(only Istio 1\.27's sidecar template is\)/);
        notSimulated.push(c.where);
        continue;
      }
      expect(sim.kind, c.where).toBe('injected');
      if (sim.kind !== 'injected') continue;
      expect(judged(sim.pod as Obj), c.where).toEqual(judged(real.pod));
      const decision = (p: Obj) => {
        const parsed = parsePod(p, c.where);
        if (!parsed.ok) return `unparsable: ${parsed.error}`;
        const d = decide({ pod: parsed.pod, namespace: 'mesh' }, nodes, cfg);
        return `${d.kind} ${d.reason}`;
      };
      expect(decision(sim.pod as Obj), c.where).toBe(decision(real.pod));
      compared++;
    }
    console.log(
      `[simulate] ${_name}: ${compared} injected templates compared field by field; not simulated (another template): ${notSimulated.join(', ') || 'none'}; refused by the real injector: ${refused.length}\n  ${refused.join('\n  ')}`,
    );
    expect(compared).toBeGreaterThan(30);
  });
});

describe('explain gates like istioctl analyze', () => {
  const restricted = {
    runAsNonRoot: true,
    runAsUser: 1000,
    runAsGroup: 1000,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
  };
  const deployment = (name: string, spec: Obj = {}) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'shop' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.example/app:1', securityContext: restricted }], ...spec },
      },
    },
  });
  // Pinned to node-a, whose CNI chain no agent verified: meshgate refuses its pods (node_unverified), but only once
  // Istio's injector gave them a proxy: before that it waits for the injector (no_proxy_yet) — what explain said.
  const bad = deployment('bad', { nodeName: 'node-a' });
  const good = deployment('good');
  const configMaps = (): Array<{
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string };
    data: Record<string, string>;
  }> => [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'istio-sidecar-injector', namespace: 'istio-system' },
      data: { config: native.rendered.injectorConfig, values: native.rendered.injectorValues },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'istio', namespace: 'istio-system' },
      data: { mesh: native.rendered.mesh },
    },
  ];

  it('offline: -f with --mesh-config simulates the injector; 5 when a template is refused, 0 when none is', async () => {
    const mc = join(work, 'istio-cms.yaml');
    writeFileSync(mc, stringify({ apiVersion: 'v1', kind: 'List', items: configMaps() }));
    const run = async (doc: Obj) => {
      const f = join(work, `${(doc.metadata as Obj).name}.yaml`);
      writeFileSync(f, stringify(doc));
      const io = memoryIO('');
      const code = await explain(['--mesh', 'istio', '--mesh-config', mc, '-f', f], io);
      return { code, out: io.out, err: io.err };
    };
    const b = await run(bad);
    console.log(b.out);
    expect(b.code, b.err).toBe(5);
    expect(b.out).toMatch(
      /simulated Istio's injector \(ConfigMap istio-system\/istio-sidecar-injector\): it injects the pod; then meshgate:\n\s+REJECTED \(node_unverified\)/,
    );
    expect(b.out).toMatch(/a simulation, which may differ from the real injector/);
    const g = await run(good);
    expect(g.code, g.out + g.err).toBe(0);
    expect(g.out).toMatch(/simulated Istio's injector/);
    // Without the mesh's ConfigMaps there is nothing to simulate: the answer says so, and nothing is refused.
    const io = memoryIO('');
    writeFileSync(join(work, 'bad-only.yaml'), stringify(bad));
    expect(await explain(['--mesh', 'istio', '-f', join(work, 'bad-only.yaml')], io)).toBe(0);
    expect(io.out).toMatch(/no_proxy_yet[\s\S]*was not simulated: give its ConfigMaps with --mesh-config/);
    // A template refused before any injection (an app as the proxy's UID) is refused with or without the mesh's.
    writeFileSync(
      join(work, 'uid.yaml'),
      stringify(
        deployment('uid', {
          containers: [{ name: 'app', image: 'a', securityContext: { ...restricted, runAsUser: 1337 } }],
        }),
      ),
    );
    const uid = memoryIO('');
    expect(await explain(['--mesh', 'istio', '-f', join(work, 'uid.yaml')], uid)).toBe(5);
    expect(uid.out).toMatch(/REJECTED \(proxy_identity\)/);
  });

  it('live: explain deploy/X reads the injector’s ConfigMaps, simulates it and exits 5 on a refusal', async () => {
    await core.createNamespace({ body: { metadata: { name: 'istio-system' } } });
    for (const cm of configMaps()) await core.createNamespacedConfigMap({ namespace: 'istio-system', body: cm });
    await core.createNamespace({
      body: {
        metadata: { name: 'shop', labels: { 'istio-injection': 'enabled', 'meshgate.io/enforcement': 'enforce' } },
      },
    });
    const apps = cp.kc.makeApiClient(AppsV1Api);
    for (const d of [bad, good]) await apps.createNamespacedDeployment({ namespace: 'shop', body: d as never });
    const env = { KUBECONFIG: cp.kubeconfigPath, HOME: work };
    // No injector is installed yet: its ConfigMaps are anyone's (src/mesh/installed.ts), nothing is simulated.
    const none = memoryIO('', env);
    expect(await explain(['deploy/bad', '-n', 'shop', '--mesh', 'istio'], none), none.err).toBe(0);
    expect(none.out).not.toMatch(/simulated Istio's injector/);
    // Istio's injector as istiod's chart installs it: a webhook calling Service istiod in istio-system (its selector
    // matches no namespace here, so the apiserver never calls it).
    await cp.kc.makeApiClient(AdmissionregistrationV1Api).createMutatingWebhookConfiguration({
      body: {
        metadata: { name: 'istio-sidecar-injector' },
        webhooks: [
          {
            name: 'namespace.sidecar-injector.istio.io',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Ignore',
            clientConfig: { service: { namespace: 'istio-system', name: 'istiod', path: '/inject' } },
            namespaceSelector: { matchLabels: { 'meshgate.test/never': 'selected' } },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          },
        ],
      },
    });
    const io = memoryIO('', env);
    const code = await explain(['deploy/bad', '-n', 'shop', '--mesh', 'istio', '-o', 'json'], io);
    expect(code, io.err).toBe(5);
    const r = JSON.parse(io.out) as {
      results: Array<{
        outcome: string;
        decision: { reason: string };
        simulation?: { by?: string; injected: boolean };
      }>;
    };
    expect(r.results[0]).toMatchObject({
      outcome: 'refused',
      decision: { reason: 'node_unverified' },
      simulation: { injected: true },
    });
    const ok = memoryIO('', env);
    expect(await explain(['deploy/good', '-n', 'shop', '--mesh', 'istio'], ok), ok.err).not.toBe(5);
    expect(ok.out).toMatch(
      /simulated Istio's injector \(ConfigMap istio-system\/istio-sidecar-injector\): it injects the pod/,
    );
    // A namespace Istio's webhooks do not select: the injector would not run, and meshgate's answer says so.
    await core.createNamespace({ body: { metadata: { name: 'plain' } } });
    await apps.createNamespacedDeployment({
      namespace: 'plain',
      body: { ...good, metadata: { name: 'good', namespace: 'plain' } } as never,
    });
    const plain = memoryIO('', env);
    await explain(['deploy/good', '-n', 'plain', '--mesh', 'istio'], plain);
    expect(plain.out).toMatch(/it does not inject the pod \(no istiod webhook selects it/);
  });
});
