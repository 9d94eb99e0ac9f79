/** Small builders for decision-core tests. */
import { buildConfig } from '../../src/config/load.ts';
import type { MeshgateConfig } from '../../src/config/types.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import type { Pod } from '../../src/inject/pod.ts';

export const cfg = (over: Record<string, unknown> = {}): MeshgateConfig => buildConfig(over, 'test');

export function facts(nodes: Record<string, { verified: boolean; kubeletVersion?: string; reason?: string }>) {
  return nodeFactsFromState({ nodes }, 'test');
}

export function pod(spec: Partial<Pod['spec']> = {}, meta: Pod['metadata'] = { name: 'web', namespace: 'demo' }): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec } };
}

/** How the DaemonSet controller pins a pod to one node. */
export function pinnedTo(node: string): Partial<Pod['spec']> {
  return {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
        },
      },
    },
  };
}

export const enabledNs = { name: 'demo', labels: { 'meshgate.io/inject': 'enabled' } };
