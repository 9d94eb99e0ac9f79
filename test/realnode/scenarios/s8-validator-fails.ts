// S8: the validator fails on a node the agent calls verified — here because the runtime loads another file than
// the agent reads: rn-1's agent is pointed at a copy of the conf dir that still chains istio-cni, while rn-1's
// containerd loads its real dir, now without the plugin. Every pod scheduled to rn-1 fails validation; the repair
// controller deletes it and its ReplicaSet makes a new one, which the scheduler may put on rn-1 again, for ever.
// The capability this scenario exercises (issue 13, src/repair/quarantine*.ts): when validator failures cluster on
// a node (N within a window), meshgate withdraws the node's verification — condition MeshCNIVerified False with the
// evidence, label false, an Event on the Node — so new pods go elsewhere: rn-2 chains istio-cni here, so the
// replicas (pinned to verified nodes at admission) end up redirected on rn-2. (With no verified node left, pods
// pinned while rn-1 was still verified would stay Pending until deleted: docs/repair.md.)
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CONFLIST_NAME } from '../harness/cni.ts';
import { VERIFIED_LABEL } from '../harness/agent.ts';
import {
  core,
  createDeployment,
  nodeCondition,
  type Scenario,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  workloadRight,
  watchNamespace,
} from './common.ts';
import { OPT_IN_LABELS } from '../harness/mesh.ts';

const NS = 's8';
const REPLICAS = 3;
/** Repair deletes at most 10 pods a minute; a few rounds of failures must be enough to withdraw the node. */
const DEADLINE_MS = 120_000;

export const s8: Scenario = {
  id: 'S8',
  title: 'validator fails on a node the agent calls verified (runtime loads another file)',
  namespaces: [NS],
  async run({ cluster, mesh }) {
    const rn1 = cluster.node('rn-1');
    const rn2 = cluster.node('rn-2');
    rn2.writeConflist(rn2.standardChain(true)); // where the pods can go once rn-1 is withdrawn
    await mesh.waitVerdict('rn-2', true);
    const shadow = join(rn1.dir, 'net.d-agent');
    mkdirSync(shadow, { recursive: true });
    copyFileSync(join(rn1.cni.confDir, CONFLIST_NAME), join(shadow, CONFLIST_NAME));
    await mesh.restartAgent(rn1, { confDir: shadow });
    await mesh.waitVerdict('rn-1', true);
    rn1.writeConflist(rn1.standardChain(false)); // what containerd loads; the agent keeps reading the copy
    return watchNamespace({ cluster, mesh }, NS, OPT_IN_LABELS, async ({ m, failures, seen }) => {
      const t0 = Date.now();
      await createDeployment(cluster, NS, 'web', REPLICAS);
      const withdrawn = async () =>
        (await core(cluster).readNode({ name: 'rn-1' })).metadata?.labels?.[VERIFIED_LABEL] === 'false';
      const rightMs = await waitRight(
        t0,
        DEADLINE_MS,
        async () => (await withdrawn()) && workloadRight(m, NS, 'web', REPLICAS),
      );
      await m.settled();
      const nodeEvents = (await visibleEvents(cluster, NS, t0, ['rn-1'])).filter((e) => e.startsWith('Event Node'));
      seen.push(await nodeCondition(cluster, 'rn-1'), ...nodeEvents, ...(await visibleEvents(cluster, NS, t0)));
      if (!(await withdrawn())) {
        failures.push(
          `MISSING CAPABILITY (S8): rn-1 is still verified (${VERIFIED_LABEL}=true) ${DEADLINE_MS / 1000} s after its pods began failing validation ` +
            `(${m.all().length} pods created, none of them ran); meshgate must withdraw a node's verification when validator failures cluster on it`,
        );
      } else if (nodeEvents.length === 0) {
        failures.push('rn-1 was withdrawn without an Event on the Node');
      }
      if (rightMs === undefined && (await withdrawn()))
        failures.push(
          `${REPLICAS} redirected replicas not running ${DEADLINE_MS / 1000} s after the Deployment was created`,
        );
      failures.push(...unredirectedDetail(m));
      return { rightMs };
    });
  },
};
