// Scenario cases on a real cluster: create each case's pod, wait for it to run, judge its redirection from inside
// its netns, compare with what the case expects, and print one table. Phase-2 scenarios add cases (and change
// node chains or install meshgate before creating them); the judging and reporting stay the same.
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { describeError } from '../../e2e/harness/wait.ts';
import type { RealCluster } from './cluster.ts';
import type { Redirection } from './judge.ts';
import type { Timings } from './timings.ts';

export interface Expectation {
  rules: boolean;
  reachesProxy: boolean;
  /** The pod reaches phase Running (false: it must be refused or stay un-started). */
  running: boolean;
}

export interface Case {
  node: string;
  pod: V1Pod;
  /** A mesh pod (has the proxy): counted in "running without redirection" when it runs unredirected. */
  mesh: boolean;
  expect: Expectation;
}

export interface CaseResult {
  case: Case;
  running: boolean;
  redirection?: Redirection;
  /** Why the pod did not run, or why it could not be judged. */
  note: string;
  pass: boolean;
}

/** 120 s: image import is done beforehand, so a pod runs in seconds; this only bounds a stuck sandbox. */
const RUNNING_TIMEOUT_MS = 120_000;

/** Waits until the pod is Running (true) or the timeout passes (false, with the last container state). */
async function waitRunning(
  core: CoreV1Api,
  ns: string,
  name: string,
): Promise<{ pod: V1Pod; running: boolean; note: string }> {
  const deadline = Date.now() + RUNNING_TIMEOUT_MS;
  for (;;) {
    const pod = await core.readNamespacedPod({ name, namespace: ns });
    if (pod.status?.phase === 'Running') return { pod, running: true, note: '' };
    if (Date.now() > deadline || pod.status?.phase === 'Failed') {
      const waiting = (pod.status?.containerStatuses ?? []).map((s) =>
        `${s.name}: ${s.state?.waiting?.reason ?? ''} ${s.state?.waiting?.message ?? ''}`.trim(),
      );
      return { pod, running: false, note: `phase ${pod.status?.phase}; ${waiting.join('; ')}` };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function runCases(
  cluster: RealCluster,
  ns: string,
  cases: Case[],
  timings: Timings,
): Promise<CaseResult[]> {
  const core = cluster.cp.kc.makeApiClient(CoreV1Api);
  const started = await timings.async(`pods start (${cases.length} pods, created together)`, () =>
    Promise.all(
      cases.map(async (c) => {
        await core.createNamespacedPod({ namespace: ns, body: c.pod });
        return waitRunning(core, ns, c.pod.metadata!.name!);
      }),
    ),
  );
  return timings.async('judge pods (iptables-save + probe dial in each netns)', async () => {
    const results: CaseResult[] = [];
    for (const [i, c] of cases.entries()) {
      const { pod, running, note } = started[i];
      let redirection: Redirection | undefined;
      let why = note;
      try {
        redirection = await cluster.redirectionOf(pod);
      } catch (err) {
        why = [note, `not judged: ${describeError(err)}`].filter(Boolean).join('; ');
      }
      const seen = { rules: redirection?.rules ?? false, reachesProxy: redirection?.reachesProxy ?? false, running };
      const pass =
        seen.rules === c.expect.rules &&
        seen.reachesProxy === c.expect.reachesProxy &&
        seen.running === c.expect.running;
      results.push({ case: c, running, redirection, note: why, pass });
    }
    return results;
  });
}

export function printResults(results: CaseResult[]): void {
  const rows = [['node', 'pod', 'rules', 'reachesProxy', 'Running', 'result', 'evidence']];
  for (const r of results) {
    const x = r.redirection;
    const evidence = x
      ? `nat rules ${x.natRules}${x.backends.length ? ` (${x.backends.join('+')})` : ''}; dial: ${x.dial}`
      : '';
    const want = r.case.expect;
    rows.push([
      r.case.node,
      r.case.pod.metadata!.name!,
      String(x?.rules ?? '-'),
      String(x?.reachesProxy ?? '-'),
      String(r.running),
      r.pass ? 'PASS' : `FAIL (want rules=${want.rules} reachesProxy=${want.reachesProxy} Running=${want.running})`,
      [evidence, r.note].filter(Boolean).join('; '),
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  console.log('');
  for (const r of rows)
    console.log(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '));
}
