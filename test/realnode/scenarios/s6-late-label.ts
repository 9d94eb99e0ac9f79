// S6: a namespace is labelled (opted in) after its pods exist. Admission never saw those pods, so they keep
// running without a proxy or redirection until something replaces them. The capability this scenario exercises
// (asked for in issue 13, built in src/repair): the repair controller evicts the pods of an opted-in namespace
// that run without meshgate's redirect, rate-limited and with an Event, so their controllers recreate them
// through admission — meshed. Judged only through the public surface: the repair controller as the tier runs it
// (its flags, see scenarios/capabilities.ts), the pods, their Events.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  core,
  createDeployment,
  type Scenario,
  unredirectedDetail,
  visibleEvents,
  waitRight,
  workloadRight,
  watchNamespace,
} from './common.ts';
import { appRunning, redirected } from '../harness/monitor.ts';
import { OPT_IN_LABELS } from '../harness/mesh.ts';
import { linkerdOptIn } from '../harness/linkerd-mesh.ts';

const NS = 's6';
const REPLICAS = 3;
/** Eviction is rate-limited like repair (10 a minute): 3 pods need well under a minute. */
const DEADLINE_MS = 60_000;

export const s6: Scenario = {
  id: 'S6',
  title: 'namespace labelled after its pods exist',
  namespaces: [NS],
  async run({ cluster, mesh }) {
    return watchNamespace({ cluster, mesh }, NS, {}, async ({ m, failures, seen }) => {
      await createDeployment(cluster, NS, 'web', REPLICAS);
      const before = await waitRight(Date.now(), 60_000, () => m.current(NS).filter(appRunning).length === REPLICAS);
      await m.settled();
      if (before === undefined) failures.push(`setup: ${REPLICAS} unmeshed replicas did not start`);
      const t0 = Date.now();
      await core(cluster).patchNamespace(
        // Linkerd's opt-in is an annotation: the user adds it with meshgate's label.
        {
          name: NS,
          body: { metadata: { labels: OPT_IN_LABELS, annotations: linkerdOptIn(cluster.meshName, OPT_IN_LABELS) } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const rightMs = await waitRight(t0, DEADLINE_MS, () => workloadRight(m, NS, 'web', REPLICAS));
      await m.settled();
      // Pods from before the label ran unredirected by construction; what counts is who still does at the end.
      const stillUnmeshed = m
        .current(NS)
        .filter((p) => appRunning(p) && !redirected(m.pods.get(p.metadata!.uid!)?.redirection));
      if (rightMs === undefined) {
        failures.push(
          `MISSING CAPABILITY (S6): ${stillUnmeshed.length} pods of opted-in namespace ${NS} still run without redirection ${DEADLINE_MS / 1000} s after the label; ` +
            "the repair controller must evict pods of an opted-in namespace that run without meshgate's redirect so their controllers recreate them meshed",
        );
      }
      const lateUnredirected = m.unredirected().filter((p) => p.firstSeen >= t0);
      failures.push(...unredirectedDetail(m).filter((_, i) => m.unredirected()[i].firstSeen >= t0));
      seen.push(...(await visibleEvents(cluster, NS, t0)));
      return { unredirected: stillUnmeshed.length + lateUnredirected.length, rightMs };
    });
  },
};
