/**
 * `meshgate explain KIND/NAME`'s node facts (src/cli/explain-nodes.ts): a pod bound to a node reads that Node and its
 * agent's Lease and nothing else, whatever the cluster's size; a template with no node chosen streams the Nodes and
 * keeps only counts and the named ones. Over a hand-written reader that records what is asked.
 */
import { describe, expect, it } from 'vitest';
import { explainNodes, templateNode } from '../../src/cli/explain-nodes.ts';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, VERIFIED_LABEL, type VerdictNode } from '../../src/contract/node.ts';
import { testConfig } from '../support/config.ts';

const cfg = testConfig('istio');
const MIN = 60_000;

/** A Node as its agent publishes it: verified with a heartbeat `ageMin` ago, kubelet `kubelet`. */
function node(name: string, o: { verified?: boolean; ageMin?: number; kubelet?: string } = {}): VerdictNode {
  const verified = o.verified ?? true;
  const plugin = cfg.config.cni.pluginType;
  return {
    metadata: {
      name,
      labels: { [VERIFIED_LABEL]: String(verified) },
      annotations: { [EVIDENCE_ANNOTATION]: JSON.stringify({ pluginType: plugin, plugins: ['calico', plugin] }) },
    },
    status: {
      nodeInfo: { kubeletVersion: o.kubelet ?? 'v1.34.1' },
      conditions: [
        {
          type: CONDITION_TYPE,
          status: verified ? 'True' : 'False',
          reason: verified ? 'verified' : 'mesh_plugin_missing',
          lastHeartbeatTime: new Date(Date.now() - (o.ageMin ?? 1) * MIN).toISOString(),
        },
      ],
    },
  } as VerdictNode;
}

class Reader {
  asked: string[] = [];
  readonly all: VerdictNode[];
  readonly leases: Map<string, number>;
  constructor(all: VerdictNode[], leases: Map<string, number> = new Map()) {
    this.all = all;
    this.leases = leases;
  }
  async node(name: string) {
    this.asked.push(`node ${name}`);
    return this.all.find((n) => n.metadata?.name === name);
  }
  async nodeLease(_ns: string, name: string) {
    this.asked.push(`lease ${name}`);
    return this.leases.get(name);
  }
  async nodeLeases() {
    this.asked.push('leases');
    return this.leases;
  }
  async nodes(each: (n: VerdictNode) => void) {
    this.asked.push('nodes');
    for (const n of this.all) each(n);
    return undefined;
  }
}

describe('explain reads the Nodes it needs', () => {
  const cluster = () =>
    new Reader(
      [
        node('a'),
        // Its condition is an hour old, its agent's Lease renewed a minute ago: verified, as the webhook reads it.
        node('b', { ageMin: 60 }),
        node('old', { verified: false, kubelet: 'v1.27.3' }),
      ],
      new Map([['b', Date.now() - MIN]]),
    );

  it('a pod bound to a node: a GET of that Node and its Lease, no list', async () => {
    const r = cluster();
    const facts = await explainNodes(r as never, cfg, ['b', 'b']);
    expect(r.asked).toEqual(['node b', 'lease b']);
    expect(facts.get('b')).toMatchObject({ name: 'b', verified: true });
    expect(facts.get('a')).toBeUndefined();
    expect(facts.size()).toBe(1);
  });

  it('a node that does not exist is unknown, as in the webhook', async () => {
    const r = cluster();
    const facts = await explainNodes(r as never, cfg, ['gone']);
    expect(r.asked).toEqual(['node gone']);
    expect(facts.get('gone')).toBeUndefined();
  });

  it('a template without a node: every Node streamed and counted, only the named kept', async () => {
    const r = cluster();
    let read = 0;
    const facts = await explainNodes(r as never, cfg, [undefined, 'a'], () => read++);
    expect(r.asked).toEqual(['leases', 'nodes']);
    // Each Node read is heard (the progress line on a terminal).
    expect(read).toBe(3);
    expect([...facts.facts()].map((f) => f.name)).toEqual(['a']);
    expect(facts.size()).toBe(3);
    expect(facts.anyVerified()).toBe(true);
    // The 1.27 kubelet is not verified: every verified one has native sidecars, not every one.
    expect(facts.nativeSidecars('verified')).toBe(true);
    expect(facts.nativeSidecars('all')).toBe(false);
  });

  it('finds the node a template is bound or pinned to', () => {
    expect(templateNode({ metadata: {}, spec: { nodeName: 'n1', containers: [] } })).toBe('n1');
    const pinned = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }],
          },
        },
      },
    };
    expect(templateNode({ metadata: {}, spec: { ...pinned, containers: [] } })).toBe('n2');
    expect(templateNode({ metadata: {}, spec: { containers: [] } })).toBeUndefined();
  });
});
