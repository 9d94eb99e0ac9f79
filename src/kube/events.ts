/**
 * core/v1 Events, the way kubectl describe shows them: one per occurrence (count 1, a generated name), on a Pod or a
 * Node. Nodes' Events go in namespace default, where the kubelet's own go.
 */
import type { KubeClient } from './api/client.ts';
import { core } from './api/paths.ts';

export interface Involved {
  kind: 'Pod' | 'Node';
  name: string;
  namespace?: string;
  uid?: string;
}

/** metav1.Time: RFC 3339, whole seconds. */
const kubeNow = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

export async function createEvent(
  client: KubeClient,
  involved: Involved,
  e: { type: 'Normal' | 'Warning'; reason: string; message: string; component: string },
): Promise<void> {
  const namespace = involved.namespace ?? 'default';
  const now = kubeNow();
  await client.create(core('events', { namespace }), {
    metadata: { generateName: `${involved.name}.`, namespace },
    involvedObject: { apiVersion: 'v1', ...involved },
    reason: e.reason,
    message: e.message,
    type: e.type,
    source: { component: e.component },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  });
}
