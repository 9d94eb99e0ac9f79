// Reads what scenario S9's app (test/realnode/images/become-proxy.c) reports: one JSON line on its stdout, read as a
// person would, through the pod's log (the apiserver asks the kubelet). The app prints it once and then idles, so
// the line stays in the log for as long as the pod runs.
import type { V1Pod } from '@kubernetes/client-node';
import { describeError } from '../../e2e/harness/wait.ts';
import type { RealCluster } from '../harness/cluster.ts';
import { APP_CONTAINER, appRunning } from '../harness/monitor.ts';
import { core, sleep } from './common.ts';

/** become-proxy.c's report: who it was, what the kernel let it do, and where its connection went. */
export interface Probe {
  uid: number;
  gid: number;
  /** /proc/self/status capability sets (hex) and no_new_privs, before it tried anything. */
  capPrm: string;
  capEff: string;
  capBnd: string;
  noNewPrivs: string;
  /** "ok" or the errno's name (EPERM, …) of: raising its permitted capabilities, setgid(1337), setuid(1337). */
  raise: string;
  setgid: string;
  setuid: string;
  uidAfter: number;
  gidAfter: number;
  /** The connection to the probe address: "ok" or the errno's name; `line` what the other end sent first. */
  dial: string;
  line: string;
  attempts: number;
  ms: number;
}

const FIELDS: (keyof Probe)[] = ['capPrm', 'setgid', 'setuid', 'uidAfter', 'dial', 'line'];
/** 500 ms: a pod starts in seconds; a few log reads a second are cheap. */
const POLL_MS = 500;

function parse(log: string): Probe | undefined {
  for (const line of log.split('\n').reverse()) {
    if (!line.startsWith('{')) continue;
    try {
      const p = JSON.parse(line) as Probe;
      if (FIELDS.every((f) => f in p)) return p;
    } catch {
      // not the report
    }
  }
  return undefined;
}

/**
 * Waits (until `deadline`, ms since the epoch) for pod `name`'s app to run and report; returns the report and the
 * pod as it was then, or the last thing that was wrong (a sentence).
 */
export async function readProbe(
  c: RealCluster,
  namespace: string,
  name: string,
  deadline: number,
): Promise<{ probe: Probe; pod: V1Pod } | string> {
  let last = 'the pod was never read';
  while (Date.now() < deadline) {
    try {
      const pod = await core(c).readNamespacedPod({ name, namespace });
      if (!appRunning(pod)) {
        const state = pod.status?.containerStatuses?.find((s) => s.name === APP_CONTAINER)?.state;
        last = `phase ${pod.status?.phase}, app ${JSON.stringify(state ?? 'not created')}`;
      } else {
        const log = await core(c).readNamespacedPodLog({ name, namespace, container: APP_CONTAINER });
        const probe = parse(log);
        if (probe) return { probe, pod };
        last = `the app runs but has not reported yet (log: ${JSON.stringify(log.slice(-200))})`;
      }
    } catch (err) {
      last = describeError(err);
    }
    await sleep(POLL_MS);
  }
  return last;
}
