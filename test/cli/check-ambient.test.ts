/**
 * `meshgate check` on Istio ambient namespaces (issue 33 §6): the pods' namespace labels reach the judge (Istio's
 * enablement selectors read them: without them every pod of an ambient namespace was ambient_namespace_unknown), an
 * admitted ambient pod that still holds ztunnel's capture passes, and one istio-cni took out of the mesh while it
 * runs is reported — a failure at enforce, "would be refused" below — with what to do.
 */
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import type { NamespaceFacts, PodRecord, WebhookConfig } from '../../src/check/facts.ts';
import { optedInNamespaces } from '../../src/check/judge-namespaces.ts';
import { PodTally } from '../../src/check/judge-pods.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { cfg, verified } from '../policy/mutate/fixtures.ts';
import { levelEntry } from '../support/level-entries.ts';

const AMBIENT = cfg('istio', { ambient: { enabled: true } });
const config: WebhookConfig = {
  kind: 'mutating',
  name: 'meshgate',
  webhooks: [
    levelEntry('ns-meshgate', 'enforce', '/mutate'),
    levelEntry('ns-meshgate-audit', 'audit', '/mutate/audit'),
  ],
};
const ambientNs = { 'meshgate.io/inject': 'enabled', 'istio.io/dataplane-mode': 'ambient' };
const namespaces: NamespaceFacts[] = [
  { name: 'shop', labels: { ...ambientNs, 'meshgate.io/enforcement': 'enforce' } },
  { name: 'trial', labels: ambientNs },
];
const opted = optedInNamespaces(namespaces, config, undefined);
const labels = new Map(namespaces.map((n) => [n.name, n.labels]));

/** An ambient pod as meshgate admitted it, running on a verified node with its validator completed. */
function running(namespace: string, redirection: string | undefined): PodRecord {
  const p: Pod = { metadata: { name: 'web-1', namespace }, spec: { nodeName: 'good', containers: [{ name: 'app' }] } };
  const d = decide({ pod: p, namespace, namespaceLabels: ambientNs }, verified, AMBIENT);
  if (d.kind !== 'patch') throw new Error(JSON.stringify(d));
  const pod = jsonpatch.applyPatch(structuredClone(p), structuredClone(d.ops) as jsonpatch.Operation[], true, false)
    .newDocument as Pod & { status?: unknown };
  if (redirection !== undefined)
    pod.metadata!.annotations = { ...pod.metadata!.annotations, 'ambient.istio.io/redirection': redirection };
  pod.status = {
    phase: 'Running',
    initContainerStatuses: [{ name: 'istio-validation', state: { terminated: { exitCode: 0 } } }],
  };
  return {
    namespace,
    name: 'web-1',
    object: pod,
    labels: pod.metadata?.labels,
    annotations: pod.metadata?.annotations,
    phase: 'Running',
    deleting: false,
    owner: { kind: 'ReplicaSet', name: 'web-5d4f' },
  };
}

describe('meshgate check on ambient namespaces', () => {
  it('a captured ambient pod passes (its namespace labels reach the judge)', () => {
    const tally = new PodTally(opted, verified, AMBIENT, labels);
    expect(tally.add(running('shop', 'enabled'))).toBe(false);
    // Without the labels, Istio's selectors cannot be read: what the check did before.
    expect(new PodTally(opted, verified, AMBIENT).add(running('shop', 'enabled'))).toBe(true);
  });

  it('a pod that lost its capture while running: a failure at enforce, would-be-refused below, with advice', () => {
    const tally = new PodTally(opted, verified, AMBIENT, labels);
    expect(tally.add(running('shop', undefined))).toBe(true);
    expect(tally.add(running('trial', undefined))).toBe(true);
    const results = tally.results(new Map(), true);
    const redirected = results.find((r) => r.code === 'pods_redirected')!;
    expect(redirected.status).toBe('fail');
    expect(redirected.items?.[0]).toMatchObject({ reason: 'ambient_capture_lost' });
    expect(redirected.items?.[0].message).toMatch(
      /runs without ztunnel's capture: istio-cni removed its ambient\.istio\.io\/redirection annotation/,
    );
    expect(redirected.items?.[0].message).toMatch(
      /put back the namespace's \(or the pod's\) istio\.io\/dataplane-mode/,
    );
    const would = results.find((r) => r.code === 'pods_would_be_refused')!;
    expect(would.status).toBe('warn');
    expect(would.items?.[0]).toMatchObject({ reason: 'ambient_capture_lost' });
    expect(would.items?.[0].message).toContain("pod trial/web-1 runs without ztunnel's capture");
  });
});
