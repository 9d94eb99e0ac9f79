// The ambient twins (issue 26) of the chain scenarios, on the ambient line's one ambient node rn-1 (rn-2 runs no
// istio-cni agent or ztunnel: never verified for ambient, so pods that cannot go to rn-1 wait Pending):
//   A1   rn-1's chain lacks istio-cni when ambient pods are created (its file rewritten without it, as at a node's
//        first boot): a pod bound to rn-1 is refused, the Deployment's pods wait; the installer chains istio-cni
//        10 s later and they run redirected (S1's twin, the ambient node being the only one)
//   A2   aws-node renames in 10-aws.conflist without istio-cni after verification, while pods are created (S10's
//        change, judged as S2)
//   A2C  Cilium's agent in exclusive mode takes the conf dir (S13's change, judged as S2)
//   A3   rn-1 reboots: containerd and the kubelet are back before istio-cni's DaemonSet (its agent, its file) and
//        ztunnel; the pods' new sandboxes go through a chain without istio-cni, where meshgate's ambient validator,
//        first in each pod, fails closed (S11's twin, in the order S11 did not see: meshgate's own node agent is
//        back AGENT_LATE_MS after the kubelet, so the kubelet re-admits the pods while rn-1 still says verified)
// The node quarantine is not switched on for this line (scenarios.ts): with one ambient node it would hold rn-1
// withdrawn with nowhere else to run; it is judged on the sidecar lines and in test/policy/ambient/repair.test.ts.
import { AMBIENT_OPT_IN } from '../harness/mesh.ts';
import {
  appContainer,
  createDeployment,
  nodeCondition,
  refusal,
  type Scenario,
  sleep,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  workloadRight,
  watchNamespace,
} from './common.ts';
import { awsNodeChange } from './s10-aws-node.ts';
import { rebootRace } from './s11-reboot.ts';
import { ciliumChange } from './s13-cilium-exclusive.ts';
import { chainRace } from './s2-s3-chain-changes.ts';

const REPLICAS = 2;
/** How long rn-1's chain lacks istio-cni in A1: long enough for the pods to be held, visibly. */
const RESTORE_AFTER_MS = 10_000;
const DEADLINE_MS = 90_000;
/** A3: longer than the validator's 10 s of retries, so its failure (exit 42, MeshRedirectFailed) is seen. */
const AGENT_LATE_MS = 12_000;

export const a1: Scenario = {
  id: 'A1',
  title: 'ambient: the chain lacks istio-cni when ambient pods are created',
  namespaces: ['a1'],
  async run({ cluster, mesh }) {
    const ns = 'a1';
    const rn1 = cluster.node('rn-1');
    return watchNamespace({ cluster, mesh }, ns, AMBIENT_OPT_IN, async ({ m, failures, seen }) => {
      const t0 = Date.now();
      rn1.writeConflist(rn1.standardChain(false));
      await mesh.waitVerdict('rn-1', false);
      seen.push(await nodeCondition(cluster, 'rn-1'));
      const refused = await refusal(cluster, ns, {
        metadata: { name: 'bound-to-rn-1' },
        spec: { nodeName: 'rn-1', containers: [appContainer(cluster)] },
      });
      if (refused === undefined) failures.push('an ambient pod bound to rn-1 (no istio-cni in its chain) was admitted');
      else seen.push(`admission: ${refused}`);
      if (refused !== undefined && !refused.includes('rn-1')) failures.push('the refusal does not name the node rn-1');
      await createDeployment(cluster, ns, 'web', REPLICAS);
      await sleep(Math.max(0, RESTORE_AFTER_MS - (Date.now() - t0)));
      if (m.ran().length) failures.push(`${m.ran().length} app(s) ran while no node could redirect ambient pods`);
      seen.push(`while istio-cni was missing: ${m.current(ns).filter((p) => !p.spec?.nodeName).length} pod(s) unbound`);
      rn1.writeConflist(rn1.standardChain(true)); // istio-cni's installer chains itself
      const rightMs = await waitRight(t0, DEADLINE_MS, () => workloadRight(m, ns, 'web', REPLICAS));
      await m.settled();
      if (rightMs === undefined)
        failures.push(`${REPLICAS} redirected replicas not running ${DEADLINE_MS / 1000} s after the restore`);
      failures.push(...unredirectedDetail(m));
      seen.push(...(await visibleEvents(cluster, ns, t0)));
      return { rightMs };
    });
  },
};

const race = { labels: AMBIENT_OPT_IN, secondNode: false };

export const a2: Scenario = {
  id: 'A2',
  title: "ambient: aws-node's init renames in 10-aws.conflist without istio-cni",
  namespaces: ['a2'],
  run: (ctx) => chainRace(ctx, 'a2', awsNodeChange, race),
};

export const a2c: Scenario = {
  id: 'A2C',
  title: "ambient: Cilium's agent takes the conf dir (exclusive)",
  namespaces: ['a2c'],
  run: (ctx) => chainRace(ctx, 'a2c', ciliumChange, race),
};

export const a3: Scenario = {
  id: 'A3',
  title: 'ambient: node reboot, runtime and kubelet back before istio-cni and ztunnel',
  namespaces: ['a3'],
  run: (ctx) =>
    rebootRace(
      ctx,
      'a3',
      AMBIENT_OPT_IN,
      async ({ cluster, mesh }) => {
        // istio-cni's DaemonSet pod (its installer writes the file, its agent serves ZDS), then ztunnel's.
        const rn1 = cluster.node('rn-1');
        rn1.writeConflist(rn1.standardChain(true));
        await mesh.ambient?.ensureUp();
      },
      AGENT_LATE_MS,
    ),
};
