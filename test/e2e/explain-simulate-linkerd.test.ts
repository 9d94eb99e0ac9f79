/**
 * The Linkerd simulation (src/mesh/simulate/linkerd-inject.ts) against Linkerd's REAL proxy injector (linkerd2's
 * controller/cmd/proxy-injector, test/e2e/harness/linkerd.ts) on a real kube-apiserver: over every pod template of
 * shared/corpus/manifests, in a namespace annotated linkerd.io/inject=enabled, what meshgate's Linkerd contracts judge
 * (src/policy/judge/linkerd.ts) is the same in both — the containers' order, image, command, args, ports, probes,
 * hooks, security context, mounts and the volumes behind them, and every variable taken from elsewhere than a literal
 * (literals are judged only as literals).
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLinkerdInjector, simulateLinkerd } from '../../src/mesh/simulate/linkerd-inject.ts';
import type { PodJson } from '../../src/mesh/simulate/types.ts';
import { startControlPlane, type ControlPlane } from './harness/index.ts';
import { startLinkerdInjector, type LinkerdInjector } from './harness/linkerd.ts';
import { CONTAINER_FIELDS, corpus, goShape, realInject } from './simulate-support.ts';

type Obj = Record<string, unknown>;

let cp: ControlPlane;
let l5d: LinkerdInjector;

beforeAll(async () => {
  cp = await startControlPlane({ nodes: [{ name: 'node-a', kubeletVersion: 'v1.34.2' }] });
  l5d = await startLinkerdInjector(cp, {}, { logLevel: 'warn' });
  // Linkerd's injector reads the namespace's annotations from the API.
  await cp.kc
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: 'l5d', annotations: { 'linkerd.io/inject': 'enabled' } } } });
}, 300_000);

afterAll(async () => {
  await l5d?.stop();
  await cp?.stop();
});

/** Linkerd's containers, as its contracts judge them (src/policy/judge/linkerd.ts): literals of env only as such. */
function judgedLinkerd(pod: Obj): Obj {
  const spec = pod.spec as Obj;
  const lists = { initContainers: (spec.initContainers ?? []) as Obj[], containers: (spec.containers ?? []) as Obj[] };
  const out: Obj = { order: Object.fromEntries(Object.entries(lists).map(([k, l]) => [k, l.map((c) => c.name)])) };
  const volumes = new Map(((spec.volumes ?? []) as Obj[]).map((v) => [v.name as string, v]));
  for (const [list, cs] of Object.entries(lists))
    for (const c of cs.filter((c) =>
      ['linkerd-proxy', 'linkerd-init', 'linkerd-network-validator'].includes(c.name as string),
    )) {
      const view: Obj = { list };
      for (const f of CONTAINER_FIELDS) if (c[f] !== undefined) view[f] = c[f];
      view.envFrom = Object.fromEntries(
        ((c.env ?? []) as Obj[]).filter((e) => e.valueFrom).map((e) => [e.name, e.valueFrom]),
      );
      view.volumes = ((c.volumeMounts ?? []) as Obj[]).map((m) => volumes.get(m.name as string) ?? `missing ${m.name}`);
      out[c.name as string] = view;
    }
  return out;
}

describe('the Linkerd simulation against Linkerd’s real proxy injector', () => {
  it('field by field over every corpus template, in a namespace annotated linkerd.io/inject=enabled', async () => {
    const inj = readLinkerdInjector({ name: 'linkerd-config', namespace: 'linkerd' }, parseYaml(l5d.rendered.values));
    if ('problem' in inj) throw new Error(inj.problem);
    let compared = 0;
    const refused: string[] = [];
    for (const c of corpus()) {
      const real = await realInject(l5d, cp.ca.certPem, c.pod, 'l5d');
      const sim = simulateLinkerd(inj, goShape(c.pod) as PodJson, {
        namespace: 'l5d',
        nativeSidecars: true,
        namespaceAnnotations: { 'linkerd.io/inject': 'enabled' },
        owner: c.owner,
      });
      if (real.refused) {
        refused.push(`${c.where}: ${real.refused.split('\n')[0].slice(0, 160)}`);
        continue;
      }
      if (!real.pod) {
        expect(sim.kind, c.where).toBe('not-injected');
        continue;
      }
      expect(sim.kind, c.where).toBe('injected');
      if (sim.kind !== 'injected') continue;
      expect(judgedLinkerd(sim.pod as Obj), c.where).toEqual(judgedLinkerd(real.pod));
      compared++;
    }
    console.log(
      `[simulate] linkerd: ${compared} injected templates compared; refused by the real injector: ${refused.length}\n  ${refused.join('\n  ')}`,
    );
    expect(compared).toBeGreaterThan(20);
  });
});
