/**
 * What `meshgate check` keeps while judging does not grow with the cluster (issue 32): a finding keeps its first
 * ITEMS_KEPT items (Nodes, workloads) and counts the rest, a workload keeps NAMES_KEPT pod names and counts the rest,
 * and the report says what was left off. Counted here by what the judgement holds, never by time or heap size.
 */
import { describe, expect, it } from 'vitest';
import type { PodRecord } from '../../src/check/facts.ts';
import { ITEMS_KEPT, Kept } from '../../src/check/kept.ts';
import { summarizeNode } from '../../src/check/judge-nodes.ts';
import { VerdictTally } from '../../src/check/node-tally.ts';
import { describeGroup, NAMES_KEPT, PodGroups } from '../../src/check/pod-groups.ts';
import { renderJson, renderTable } from '../../src/check/render.ts';
import type { Report } from '../../src/check/report.ts';

const NAMES = {
  namespace: 'meshgate',
  webhookConfig: 'meshgate',
  nodeAgent: 'meshgate-node-agent',
  tlsSecret: 'meshgate-tls',
  repairController: 'meshgate-repair-controller',
};
const expect20 = { pluginType: 'istio-cni', maxVerdictAgeMs: 20 * 60_000 };

const pod = (i: number, owner?: string): PodRecord => ({
  namespace: 'shop',
  name: `p-${i}`,
  object: {},
  deleting: false,
  ...(owner ? { owner: { kind: 'Job', name: owner } } : {}),
});

describe('bounded findings', () => {
  it('Kept keeps the first ITEMS_KEPT and counts all', () => {
    const k = new Kept<number>();
    for (let i = 0; i < 10 * ITEMS_KEPT; i++) k.add(i);
    expect(k.items).toHaveLength(ITEMS_KEPT);
    expect(k.items.at(-1)).toBe(ITEMS_KEPT - 1);
    expect([k.total, k.omitted]).toEqual([10 * ITEMS_KEPT, 9 * ITEMS_KEPT]);
  });

  it('a node check over 3×ITEMS_KEPT unverified Nodes lists ITEMS_KEPT and counts every Node', () => {
    const t = new VerdictTally();
    const n = 3 * ITEMS_KEPT;
    for (let i = 0; i < n; i++)
      t.add(summarizeNode({ metadata: { name: `node-${i}` }, status: { conditions: [] } }, expect20, 0));
    const r = t.result();
    expect(r.message).toBe(`0 of ${n} nodes verified: no pod can use CNI mode`);
    expect(r.items).toHaveLength(ITEMS_KEPT);
    expect(r.omitted).toEqual({ count: n - ITEMS_KEPT, of: 'nodes' });
    const report: Report = {
      context: { mesh: 'istio', names: NAMES, configSource: 'test', checkedAt: 'now' },
      results: [r],
    };
    expect(renderTable(report)).toContain(
      `… and ${n - ITEMS_KEPT} more nodes, counted, not listed (a finding lists at most ${ITEMS_KEPT})`,
    );
    expect(JSON.parse(renderJson(report)).results[0]).toMatchObject({ omitted: { count: n - ITEMS_KEPT } });
  });

  it('pod groups keep ITEMS_KEPT workloads and NAMES_KEPT names each, whatever the pod count', () => {
    const g = new PodGroups<'x'>();
    // One Job with many pods, then bare pods: one group each, past the bound.
    const many = 5 * NAMES_KEPT;
    for (let i = 0; i < many; i++) g.flag('x', pod(i, 'batch'), 'proxy_missing', 'no proxy');
    const bare = 2 * ITEMS_KEPT;
    for (let i = 0; i < bare; i++) g.flag('x', pod(many + i), 'proxy_missing', 'no proxy');
    const groups = g.merged(new Map());
    expect(groups).toHaveLength(ITEMS_KEPT);
    expect(g.omitted('x')).toEqual({ count: bare - (ITEMS_KEPT - 1), of: 'pods' });
    const job = groups[0];
    expect([job.pods.length, job.count]).toEqual([NAMES_KEPT, many]);
    const item = describeGroup(job, 'fail', { restart: true });
    expect(item.message).toContain(`${many} pods (p-0, p-1, p-2, … ${many - 3} more)`);
    expect(item.message).toContain(`the command names the first ${NAMES_KEPT} of ${many} pods`);
    expect(item.command?.split(' ').filter((w) => w.startsWith('p-'))).toHaveLength(NAMES_KEPT);
  });

  it('merging ReplicaSets into their Deployment adds counts and keeps at most NAMES_KEPT names', () => {
    const g = new PodGroups<'x'>();
    for (const rs of ['web-a', 'web-b'])
      for (let i = 0; i < NAMES_KEPT; i++)
        g.flag('x', { ...pod(i), name: `${rs}-${i}`, owner: { kind: 'ReplicaSet', name: rs } }, 'r', 'm');
    const deployment = { kind: 'Deployment', name: 'web' };
    const [merged, ...rest] = g.merged(
      new Map([
        ['shop/web-a', deployment],
        ['shop/web-b', deployment],
      ]),
    );
    expect(rest).toEqual([]);
    expect([merged.pods.length, merged.count]).toEqual([NAMES_KEPT, 2 * NAMES_KEPT]);
  });
});
