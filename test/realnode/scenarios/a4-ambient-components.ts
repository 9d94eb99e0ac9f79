// A4 (issue 26): on rn-1, the verified ambient node, istio-cni's node agent dies — and then, separately, ztunnel —
// while the ambient Deployment scales up. meshgate's node agent must withdraw rn-1 with the component's reason
// (ambient_agent_not_ready, ztunnel_not_ready) within its poll (5 s, the chart's default); a pod bound to rn-1 by
// name is refused; the new replicas are held (unbound, or their sandbox or meshgate's validator fails closed) and
// none runs unredirected; once the component is back every replica runs, judged redirected in its netns.
import { VERIFIED_LABEL } from '../harness/agent.ts';
import { AMBIENT_OPT_IN } from '../harness/mesh.ts';
import {
  appContainer,
  core,
  nodeCondition,
  refusal,
  type Scenario,
  scale,
  sleep,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  workloadRight,
  watchNamespace,
  baseline,
} from './common.ts';

const NS = 'a4';
/** How long each component stays down: several of meshgate's agent polls, and the kubelet's sandbox retries. */
const DOWN_MS = 10_000;
/** After the component is back: a sandbox retry back-off or a repair deletion bounds it; 90 s bounds a stuck one. */
const DEADLINE_MS = 90_000;
/** Replicas added while each component is down. */
const ADDED = 2;

export const a4: Scenario = {
  id: 'A4',
  title: "istio-cni's node agent, then ztunnel, down on the verified ambient node",
  namespaces: [NS],
  async run({ cluster, mesh }) {
    const ambient = mesh.ambient;
    if (!ambient) throw new Error('A4 needs the ambient line (harness/ambient.ts)');
    let replicas = 1;
    let rightMs: number | undefined = 0;
    return watchNamespace({ cluster, mesh }, NS, AMBIENT_OPT_IN, async (w) => {
      const { m, failures, seen } = w;
      await baseline(cluster, w, NS, replicas, 'the redirected replica');
      const phases = [
        { what: "istio-cni's node agent", kill: ambient.killAgent, reason: 'ambient_agent_not_ready' },
        { what: 'ztunnel', kill: ambient.killZtunnel, reason: 'ztunnel_not_ready' },
      ];
      for (const [i, phase] of phases.entries()) {
        const t0 = Date.now();
        await phase.kill();
        replicas += ADDED;
        await scale(cluster, NS, 'web', replicas);
        const withdrawn = await waitRight(
          t0,
          30_000,
          async () => (await core(cluster).readNode({ name: 'rn-1' })).metadata?.labels?.[VERIFIED_LABEL] === 'false',
        );
        const condition = await nodeCondition(cluster, 'rn-1');
        if (withdrawn === undefined) failures.push(`${phase.what} killed: rn-1 not withdrawn within 30 s`);
        else seen.push(`${phase.what} killed: ${condition} (withdrawn after ${(withdrawn / 1000).toFixed(1)} s)`);
        if (withdrawn !== undefined && !condition.includes(phase.reason))
          failures.push(`${phase.what} killed: the Node's condition does not name ${phase.reason}`);
        const refused = await refusal(cluster, NS, {
          metadata: { name: `bound-to-rn-1-${i}` },
          spec: { nodeName: 'rn-1', containers: [appContainer(cluster)] },
        });
        if (refused === undefined) failures.push(`a pod bound to rn-1 while ${phase.what} was down was admitted`);
        else seen.push(`admission while ${phase.what} was down: ${refused}`);
        await sleep(Math.max(0, DOWN_MS - (Date.now() - t0)));
        const held = m.current(NS).filter((p) => p.status?.phase !== 'Running').length;
        seen.push(
          `${phase.what} down ${DOWN_MS / 1000} s: ${held} pod(s) not running, apps run so far ${m.ran().length}`,
        );
        await ambient.ensureUp();
        const right = await waitRight(t0, DEADLINE_MS, () => workloadRight(m, NS, 'web', replicas));
        if (right === undefined)
          failures.push(`${replicas} redirected replicas not running ${DEADLINE_MS / 1000} s after ${phase.what} died`);
        rightMs = right === undefined || rightMs === undefined ? undefined : Math.max(rightMs, right);
        seen.push(...(await visibleEvents(cluster, NS, t0)));
      }
      await m.settled();
      failures.push(...unredirectedDetail(m));
      seen.push(await nodeCondition(cluster, 'rn-1'));
      return { rightMs };
    });
  },
};
