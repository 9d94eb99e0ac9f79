/**
 * The node facts every bench server decides with (bench/server.ts, bench/peers/floor-server.ts): the given nodes
 * verified (kubelet v1.34.1), one more present and unverified.
 */
import { nodeFactsFromState } from '../src/facts/node-state.ts';
import type { NodeFacts } from '../src/facts/node-facts.ts';

export function benchNodeFacts(verifiedNodes: readonly string[]): NodeFacts {
  const nodes = Object.fromEntries(verifiedNodes.map((n) => [n, { verified: true, kubeletVersion: 'v1.34.1' }]));
  return nodeFactsFromState(
    {
      nodes: {
        ...nodes,
        'bench-unverified': { verified: false, reason: 'mesh_plugin_missing', kubeletVersion: 'v1.34.1' },
      },
    },
    'bench',
  );
}
