// S1: a node whose active conflist lacks the mesh plugin (rn-2: bridge + portmap). A pod bound to it by name is
// refused at admission with the reason; a Deployment's pods (no node yet) are pinned to verified nodes and run on
// rn-1, redirected by istio-cni.
import {
  createDeployment,
  nodeCondition,
  refusal,
  type Scenario,
  unredirectedDetail,
  waitRight,
  workloadRight,
  appContainer,
  watchNamespace,
} from './common.ts';
import { OPT_IN_LABELS } from '../harness/mesh.ts';

const NS = 's1';
const REPLICAS = 3;
/** Three pods start in about 5 s here; 60 s only bounds a stuck one. */
const DEADLINE_MS = 60_000;

export const s1: Scenario = {
  id: 'S1',
  title: 'node whose active conflist lacks the mesh plugin',
  namespaces: [NS],
  async run({ cluster, mesh }) {
    return watchNamespace({ cluster, mesh }, NS, OPT_IN_LABELS, async ({ m, failures, seen }) => {
      const t0 = Date.now();
      const refused = await refusal(cluster, NS, {
        metadata: { name: 'bound-to-rn-2' },
        spec: { nodeName: 'rn-2', containers: [appContainer(cluster)] },
      });
      if (refused === undefined) failures.push('a pod bound to rn-2 (unverified) was admitted');
      else seen.push(`admission: ${refused}`);
      if (refused !== undefined && !(refused.includes('rn-2') && refused.includes('mesh_plugin_missing')))
        failures.push('the refusal does not name the node (rn-2) and its reason (mesh_plugin_missing)');
      await createDeployment(cluster, NS, 'web', REPLICAS);
      const rightMs = await waitRight(t0, DEADLINE_MS, () => workloadRight(m, NS, 'web', REPLICAS));
      await m.settled();
      if (rightMs === undefined)
        failures.push(`Deployment web: ${REPLICAS} redirected replicas not running after ${DEADLINE_MS / 1000}s`);
      const offNode = m.ran().filter((p) => p.node !== 'rn-1');
      if (offNode.length)
        failures.push(
          `pods ran on ${offNode.map((p) => p.node).join(', ')}: the affinity must keep them on verified rn-1`,
        );
      failures.push(...unredirectedDetail(m));
      seen.push(await nodeCondition(cluster, 'rn-2'));
      return { rightMs };
    });
  },
};
