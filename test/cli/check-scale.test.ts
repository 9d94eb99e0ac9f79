/**
 * `meshgate check`'s judging at the scale of a large cluster (5,000 Nodes, 50,000 pods in 100 opted-in namespaces,
 * 1 in 10 unmeshed across 500 Deployments): the results are right and grouped per workload, at most ITEMS_KEPT of
 * them listed and the rest counted, and the time is printed (a figure, not an assertion). The pods are fed one at a
 * time as the reader's pages would.
 * Tunable with MESHGATE_CHECK_SCALE_PODS / _NODES.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { NamespaceFacts, WebhookConfig } from '../../src/check/facts.ts';
import { optedInNamespaces } from '../../src/check/judge-namespaces.ts';
import { judgeVerdicts, summarizeNode } from '../../src/check/judge-nodes.ts';
import { PodTally } from '../../src/check/judge-pods.ts';
import { ITEMS_KEPT } from '../../src/check/kept.ts';
import { NodeFactStore } from '../../src/facts/node-facts.ts';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, VERIFIED_LABEL } from '../../src/contract/node.ts';
import { testConfig } from '../support/config.ts';

const NODES = Number(process.env.MESHGATE_CHECK_SCALE_NODES ?? 5000);
const PODS = Number(process.env.MESHGATE_CHECK_SCALE_PODS ?? 50_000);
const NAMESPACES = 100;
const PER_DEPLOYMENT = 10;

describe('meshgate check at scale', () => {
  it(`judges ${NODES} Nodes and ${PODS} pods, grouping the unmeshed ones per Deployment`, () => {
    const cfg = testConfig('custom');
    const now = Date.now();
    const t0 = performance.now();
    const beat = new Date(now - 60_000).toISOString();
    const evidence = JSON.stringify({ pluginType: 'istio-cni', plugins: ['calico', 'istio-cni'] });
    const nodes = Array.from({ length: NODES }, (_, i) =>
      summarizeNode(
        {
          metadata: {
            name: `node-${i}`,
            labels: { [VERIFIED_LABEL]: 'true' },
            annotations: { [EVIDENCE_ANNOTATION]: evidence },
          },
          status: {
            conditions: [{ type: CONDITION_TYPE, status: 'True', reason: 'verified', lastHeartbeatTime: beat }],
          },
        },
        { pluginType: 'istio-cni', maxVerdictAgeMs: 20 * 60_000 },
        now,
      ),
    );
    expect(judgeVerdicts(nodes).status).toBe('ok');
    const t1 = performance.now();

    const facts = new NodeFactStore();
    facts.replaceAll(nodes.map((n) => n.fact));
    const namespaces: NamespaceFacts[] = Array.from({ length: NAMESPACES }, (_, i) => ({
      name: `ns-${i}`,
      labels: { 'meshgate.io/inject': 'enabled' },
    }));
    const entry = {
      name: 'inject',
      url: 'https://x/mutate',
      namespaceSelector: { matchLabels: { 'meshgate.io/inject': 'enabled' } },
    };
    const m: WebhookConfig = { kind: 'mutating', name: 'meshgate', webhooks: [entry] };
    const tally = new PodTally(optedInNamespaces(namespaces, m, { ...m, kind: 'validating' }), facts, cfg);
    const status = JSON.stringify({
      version: 1,
      mode: 'cni',
      reason: 'node_verified',
      nativeSidecar: true,
      initContainers: ['meshgate-validate'],
      containers: [],
      volumes: [],
      affinity: false,
    });
    let flagged = 0;
    for (let i = 0; i < PODS; i++) {
      const deployment = Math.floor(i / PER_DEPLOYMENT);
      const unmeshed = deployment % 10 === 0;
      const name = `web-${deployment}-${i}`;
      const containers = [{ name: 'app', image: 'app:1' }];
      const object = unmeshed
        ? { metadata: { name }, spec: { nodeName: `node-${i % NODES}`, containers } }
        : {
            metadata: {
              name,
              labels: { 'meshgate.io/redirect': 'cni' },
              annotations: { 'meshgate.io/status': status },
            },
            spec: { nodeName: `node-${i % NODES}`, initContainers: [cfg.validator, cfg.own!.proxyNative], containers },
          };
      const added = tally.add({
        namespace: `ns-${deployment % NAMESPACES}`,
        name,
        object,
        labels: object.metadata.labels,
        annotations: object.metadata.annotations,
        phase: 'Running',
        deleting: false,
        owner: { kind: 'ReplicaSet', name: `web-${deployment}-rs` },
      });
      if (added) flagged++;
    }
    const t2 = performance.now();
    const owners = new Map(
      tally
        .replicaSets()
        .map((rs) => [`${rs.namespace}/${rs.name}`, { kind: 'Deployment', name: rs.name.replace(/-rs$/, '') }]),
    );
    const [redirected, admitted] = tally.results(owners, true);
    const t3 = performance.now();
    console.log(
      `meshgate check judging: ${NODES} nodes ${(t1 - t0).toFixed(0)} ms; ${PODS} pods ${(t2 - t1).toFixed(0)} ms ` +
        `(${(((t2 - t1) / PODS) * 1000).toFixed(1)} µs/pod); grouping ${(t3 - t2).toFixed(0)} ms`,
    );
    const deployments = Math.ceil(PODS / PER_DEPLOYMENT / 10);
    expect(flagged).toBe(deployments * PER_DEPLOYMENT);
    // Bounded whatever the size (issue 32): the first ITEMS_KEPT workloads listed, the pods of the others counted.
    const listed = Math.min(deployments, ITEMS_KEPT);
    expect(redirected.items).toHaveLength(listed);
    const omitted = (deployments - listed) * PER_DEPLOYMENT;
    expect(redirected.omitted?.count ?? 0).toBe(omitted);
    if (omitted)
      expect(redirected.message).toContain(`and ${omitted.toLocaleString('en-US')} more pods in workloads not listed`);
    expect(redirected.items![1]).toMatchObject({
      name: 'ns-10/deployment/web-10',
      command: 'kubectl -n ns-10 rollout restart deployment/web-10',
    });
    expect(admitted.status).toBe('ok');
  });
});
