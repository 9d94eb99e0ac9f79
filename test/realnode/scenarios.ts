// `npm run scenarios`: the real-node tier (docs/real-nodes.md). Real kubelets, containerd, runc, CNI plugins and
// the mesh's CNI plugin (istio-cni or linkerd-cni), the mesh's own injector and meshgate (webhook, node agents,
// repair controller), all inside one network namespace this run creates (the script re-executes itself under
// `flock … unshare --net`). For each line (mesh × containerd 1.6 or 2.4: scenarios/lines.ts), on a cluster of its
// own, it runs:
//   1. judge controls: pods outside meshgate, to show the judge tells a redirected pod from an unredirected one;
//   2. the scenario matrix S1–S8 of issue 13 and S9 of issue 21 §3 (test/realnode/scenarios/), one table row each;
//      on the ambient line (istio-ambient/…: istio-cni's real node agent and ztunnel on rn-1) A1–A4 of issue 26;
//   3. the emulation check: check-node's prediction against the chain containerd really runs (emulation/);
// then one table of every scenario × line, and ends with `scenarios: N passed, M failed; pods running without
// redirection: K` (then, apart, the apps S9 saw get past the proxy where apps.baselineNamespaces allows it), where
// N + M counts the scenarios, the judge controls, the emulation check and the teardown check of every line. Exit 0
// only when all passed.
// MESHGATE_REALNODE_LINES=linkerd/containerd-2.4 runs some lines; MESHGATE_REALNODE_ONLY=S2,S7 some scenarios of
// each (and skips the emulation unless it is named: EMU); MESHGATE_REALNODE_HOLD=1 keeps each line's cluster up at
// its end until Ctrl-C.
import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { repoRoot } from '../e2e/harness/binaries.ts';
import { describeError } from '../e2e/harness/wait.ts';
import { startRealCluster, type RealCluster } from './harness/cluster.ts';
import { isInside, reexecIsolated } from './harness/isolation.ts';
import { startMeshStack, type MeshStack } from './harness/mesh.ts';
import { istioShapedPod, plainPod } from './harness/pods.ts';
import type { TierMesh } from './harness/cni.ts';
import { linkerdInitPod, linkerdShapedPod } from './harness/linkerd-mesh.ts';
import { runCases, printResults, type Case } from './harness/runner.ts';
import { Timings } from './harness/timings.ts';
import { REPAIR_SWITCHES } from './scenarios/capabilities.ts';
import { removeNamespace, resetNodes, type Scenario, type ScenarioResult } from './scenarios/common.ts';
import { printMatrix } from './scenarios/matrix.ts';
import { chosenLines, lineName, printLines, type Line } from './scenarios/lines.ts';
import { s1 } from './scenarios/s1-node-lacks-plugin.ts';
import { s2, s3 } from './scenarios/s2-s3-chain-changes.ts';
import { s4, s5 } from './scenarios/s4-s5-webhook-down.ts';
import { s6 } from './scenarios/s6-late-label.ts';
import { s7 } from './scenarios/s7-daemonset.ts';
import { s8 } from './scenarios/s8-validator-fails.ts';
import { s9 } from './scenarios/s9-become-proxy.ts';
import { s10 } from './scenarios/s10-aws-node.ts';
import { s11 } from './scenarios/s11-reboot.ts';
import { s13 } from './scenarios/s13-cilium-exclusive.ts';
import { a4 } from './scenarios/a4-ambient-components.ts';
import { a1, a2, a2c, a3 } from './scenarios/a1-a3-ambient-chain.ts';
import { ambientControlCases, startAmbientNode, type AmbientNode } from './harness/ambient.ts';
import { runEmulationCheck } from './emulation/check.ts';

/** S8 last: withdrawing a node's verification may keep it withdrawn until a probe passes (issue 13). */
const SCENARIOS: Scenario[] = [s1, s2, s3, s10, s11, s13, s4, s5, s6, s7, s9, s8, a4, a1, a3, a2, a2c];
const CONTROLS_NS = 'controls';

/**
 * Pods no mesh webhook touches (namespace not opted in), shaped like Istio's CNI-mode injection by hand: on rn-1
 * istio-cni redirects the mesh pod, on rn-2 nothing does. If the judge could not say "not redirected", every
 * scenario's 0 would mean nothing.
 */
function controlCases(meshName: TierMesh, ambient: boolean): Case[] {
  if (ambient) return ambientControlCases();
  const meshShapedPod = meshName === 'linkerd' ? linkerdShapedPod : istioShapedPod;
  return [
    {
      node: 'rn-1',
      pod: meshShapedPod('mesh-rn-1', 'rn-1'),
      mesh: true,
      expect: { rules: true, reachesProxy: true, running: true },
    },
    {
      node: 'rn-1',
      pod: plainPod('plain-rn-1', 'rn-1'),
      mesh: false,
      expect: { rules: false, reachesProxy: false, running: true },
    },
    {
      node: 'rn-2',
      pod: meshShapedPod('mesh-rn-2', 'rn-2'),
      mesh: true,
      expect: { rules: false, reachesProxy: false, running: true },
    },
    {
      node: 'rn-2',
      pod: plainPod('plain-rn-2', 'rn-2'),
      mesh: false,
      expect: { rules: false, reachesProxy: false, running: true },
    },
    // Linkerd's init mode: the real linkerd2-proxy-init redirects where no CNI plugin does.
    ...(meshName === 'linkerd'
      ? [
          {
            node: 'rn-2',
            pod: linkerdInitPod('init-rn-2', 'rn-2'),
            mesh: true,
            expect: { rules: true, reachesProxy: true, running: true },
          },
        ]
      : []),
  ];
}

/** MESHGATE_REALNODE_HOLD=1: keep the cluster up to look around until Ctrl-C (which then tears it down). */
async function hold(c: RealCluster): Promise<void> {
  console.log(
    `\nholding (MESHGATE_REALNODE_HOLD). In another shell, as root:\n` +
      `  nsenter --net=/proc/${process.pid}/ns/net ${c.cp.binDir}/kubectl --kubeconfig ${c.cp.kubeconfigPath} get pods -A -o wide\n` +
      `  node dirs: ${c.nodes.map((n) => n.dir).join(' ')}\nCtrl-C tears down.`,
  );
  await new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

/**
 * Outside the namespace (network available): make sure every build the chosen lines run is there, timing each (cold
 * or warm). crane serves the registry meshgate's image is pulled from (harness/registry.ts).
 */
function builds(t: Timings): void {
  const lines = chosenLines(process.env.MESHGATE_REALNODE_LINES);
  const scripts = [
    'controlplane',
    'istio',
    'realnode',
    'crane',
    ...(lines.some((l) => l.mesh === 'linkerd') ? ['linkerd', 'linkerd-validator'] : []),
    ...(lines.some((l) => l.runtime === 'containerd-2.4') ? ['containerd'] : []),
    ...(lines.some((l) => l.ambient) ? ['ztunnel'] : []),
  ];
  for (const s of scripts.map((p) => `build-${p}.sh`)) {
    const r = t.sync(`build ${s}`, () =>
      spawnSync('bash', [join(repoRoot, 'scripts', s)], { stdio: ['ignore', 'inherit', 'inherit'] }),
    );
    if (r.status !== 0) {
      console.error(`scenarios: scripts/${s} failed (exit ${r.status})`);
      process.exit(1);
    }
  }
  console.log(`builds:\n${t.report()}`);
}

/**
 * Runs one scenario and resets the nodes for the next. Its namespaces are deleted in the background once all their
 * pods are marked terminating (the rest of their termination takes ~6 s and concerns no other scenario: each counts
 * only its own namespaces); `removals` collects those deletions, which the caller awaits before the emulation check.
 */
async function runScenario(
  s: Scenario,
  cluster: RealCluster,
  mesh: MeshStack,
  timings: Timings,
  last: boolean,
  removals: Promise<void>[],
): Promise<ScenarioResult> {
  const t0 = performance.now();
  let result: ScenarioResult;
  try {
    const r = await s.run({ cluster, mesh });
    result = { id: s.id, title: s.title, ...r, durationMs: performance.now() - t0 };
  } catch (err) {
    result = {
      id: s.id,
      title: s.title,
      created: 0,
      running: 0,
      unredirected: 0,
      seen: [],
      failures: [`the scenario broke: ${describeError(err)}`],
      durationMs: performance.now() - t0,
    };
  }
  timings.entries.push({ what: `${s.id} ${s.title}`, ms: result.durationMs });
  console.log(`${s.id}: ${result.failures.length ? 'FAILED' : 'PASS'} in ${(result.durationMs / 1000).toFixed(1)} s`);
  const removing = s.namespaces.map((ns) => removeNamespace(cluster, ns));
  removals.push(...removing.map((r) => r.gone));
  await Promise.all(removing.map((r) => r.terminating));
  if (!last) {
    await timings
      .async(`${s.id} reset (both nodes' chains and agents)`, () => resetNodes({ cluster, mesh }))
      .catch((err) => result.failures.push(`resetting the nodes after the scenario failed: ${describeError(err)}`));
  }
  return result;
}

interface LineOutcome {
  passed: number;
  failed: number;
  unredirected: number;
  baselineBypass: number;
  results: ScenarioResult[];
}

/** The cluster of the line running now, for the signal handler's teardown. */
let current: RealCluster | undefined;
let signalled: NodeJS.Signals | undefined;

/**
 * The repair controller's switches per line. The ambient line leaves the node quarantine (withdraw-verdicts) off:
 * it has one ambient node, which the quarantine would hold withdrawn with nowhere else for the pods to run.
 */
function repairSwitches(line: Line): string[] {
  return line.ambient ? REPAIR_SWITCHES.filter((f) => !f.startsWith('--withdraw-verdicts')) : [...REPAIR_SWITCHES];
}

/** One line (mesh, runtime): its own cluster, judge controls, scenarios, emulation check (EMU) and teardown. */
async function runLine(line: Line, index: number, only: string[] | undefined): Promise<LineOutcome> {
  const { mesh: meshName, runtime } = line;
  const timings = new Timings();
  // The first line has the run id the entry process cleans up after; each later one its own.
  const base = process.env.MESHGATE_REALNODE_RUN ?? `r${Date.now().toString(36)}`;
  const runId = index === 0 ? base : `${base}-${index + 1}`;
  const wanted = (id: string) => line.scenarios.includes(id) && (!only || only.includes(id));
  console.log(
    `
=== ${lineName(line)}: real-node run ${runId} in network namespace ${readlinkSync('/proc/self/ns/net')}`,
  );
  let cluster: RealCluster | undefined;
  let mesh: MeshStack | undefined;
  let ambient: AmbientNode | undefined;
  const out: LineOutcome = { passed: 0, failed: 0, unredirected: 0, baselineBypass: 0, results: [] };
  const tier0 = performance.now();
  try {
    cluster = await startRealCluster({
      runId,
      nodes: [
        { name: 'rn-1', mesh: true },
        { name: 'rn-2', mesh: false },
      ],
      meshName,
      runtime,
      ambient: line.ambient,
      timings,
    });
    current = cluster;
    const c = cluster;
    console.log(
      `nodes Ready (${runtime}): ${c.nodes.map((n) => `${n.name} (${n.ip}, ${n.mesh ? `bridge+portmap+${meshName}-cni` : 'bridge+portmap'})`).join(', ')}`,
    );

    if (line.ambient) {
      ambient = await timings.async("ambient: istio-cni's node agent + ztunnel on rn-1", () =>
        startAmbientNode(c, c.node('rn-1')),
      );
      console.log("ambient on rn-1: istio-cni's node agent (install-cni 1.27.0, ambient) ready, ztunnel connected");
    }
    await c.cp.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: CONTROLS_NS } } });
    const controls = await runCases(c, CONTROLS_NS, controlCases(meshName, line.ambient), timings);
    console.log('\njudge controls (no meshgate, namespace not opted in):');
    printResults(controls);
    controls.every((r) => r.pass) ? out.passed++ : out.failed++;
    await timings.async('judge controls: cleanup', () => removeNamespace(c, CONTROLS_NS).gone);

    mesh = await timings.async(`mesh: ${meshName} injector, meshgate webhook, node agents, repair controller`, () =>
      startMeshStack(c, repairSwitches(line), ambient),
    );
    const ch = mesh.chart;
    const injector =
      meshName === 'linkerd'
        ? "Linkerd's proxy injector (b24cd40; proxy stand-in, real proxy-init and validator)"
        : 'Istio 1.27.0 injector (proxyv2 stand-in)';
    console.log(
      `\nmesh up: ${injector}; meshgate webhook (chart defaults: mutating ${ch.webhook.mutating}, validating ${ch.webhook.validating}); ` +
        `node agents ${ch.agentArgs.join(' ')}; repair controller ${[...ch.repairArgs, ...repairSwitches(line)].join(' ')}`,
    );
    const chosen = SCENARIOS.filter((s) => wanted(s.id));
    const removals: Promise<void>[] = [];
    for (const [i, s] of chosen.entries()) {
      if (signalled) break;
      out.results.push(await runScenario(s, c, mesh, timings, i === chosen.length - 1, removals));
    }
    await timings.async('scenario namespaces deleted (in the background meanwhile)', () => Promise.all(removals));
    printMatrix(out.results);
    out.passed += out.results.filter((r) => r.failures.length === 0).length;
    out.failed += out.results.filter((r) => r.failures.length > 0).length;
    out.unredirected = out.results.reduce((n, r) => n + r.unredirected, 0);
    out.baselineBypass = out.results.reduce((n, r) => n + (r.baselineBypass ?? 0), 0);

    if (wanted('EMU')) {
      const emu = await timings.async('emulation check (check-node vs containerd)', () => runEmulationCheck(c));
      console.log(`\n${emu.line}`);
      for (const d of emu.disagreements) console.log(`  DISAGREE: ${d}`);
      if (emu.causes.length) console.log(`  disagreements by cause: ${emu.causes.join('; ')}`);
      emu.disagreements.length === 0 && emu.cases > 0 ? out.passed++ : out.failed++;
    }
    if (process.env.MESHGATE_REALNODE_HOLD) await hold(c);
  } catch (err) {
    out.failed++;
    console.error(`scenarios (${lineName(line)}): ${describeError(err)}`);
  } finally {
    await mesh?.stop().catch((err) => console.error(`scenarios: stopping the mesh: ${describeError(err)}`));
    await ambient?.stop().catch((err) => console.error(`scenarios: stopping ambient: ${describeError(err)}`));
    const left = cluster ? await cluster.stop() : [];
    current = undefined;
    console.log(
      `\ntimings (${lineName(line)}):\n${timings.report()}\n  ${'whole line (after builds)'.padEnd(40)}  ${((performance.now() - tier0) / 1000).toFixed(1)} s`,
    );
    if (left.length > 0) {
      out.failed++;
      console.log(`LEFT BEHIND after teardown:\n  ${left.join('\n  ')}`);
    } else if (cluster) {
      out.passed++;
      console.log(
        'after teardown: no cgroups, mounts, run dir or changed sysctls left (cleanup.sh checked by leftovers())',
      );
    }
  }
  return out;
}

async function main(): Promise<number> {
  const only = process.env.MESHGATE_REALNODE_ONLY?.split(',').map((s) => s.trim().toUpperCase());
  const lines = chosenLines(process.env.MESHGATE_REALNODE_LINES);
  // `on`, not `once`: the control-plane harness (procs.ts) also handles these signals and exits at once if it
  // is the only listener left; staying registered keeps the process alive until the teardown below is done.
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) return;
    signalled = sig;
    console.error(`\nscenarios: ${sig}: tearing down`);
    // The main flow fails fast once its components are gone and reports; this only bounds a stuck one.
    void (current?.stop() ?? Promise.resolve([])).finally(() =>
      setTimeout(() => process.exit(sig === 'SIGINT' ? 130 : 143), 30_000),
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const tier0 = performance.now();
  const outcomes: { line: Line; outcome: LineOutcome }[] = [];
  for (const [i, line] of lines.entries()) {
    if (signalled) break;
    outcomes.push({ line, outcome: await runLine(line, i, only) });
  }
  printLines(outcomes.map((o) => ({ line: o.line, results: o.outcome.results })));
  const sum = (k: 'passed' | 'failed' | 'unredirected' | 'baselineBypass') =>
    outcomes.reduce((n, o) => n + o.outcome[k], 0);
  let failed = sum('failed');
  if (signalled) {
    failed++;
    console.log(`interrupted by ${signalled}: results above are incomplete`);
  }
  console.log(
    `\nwhole tier (after builds, ${outcomes.length} lines): ${((performance.now() - tier0) / 1000).toFixed(1)} s`,
  );
  console.log(
    `\nscenarios: ${sum('passed')} passed, ${failed} failed; pods running without redirection: ${sum('unredirected')}` +
      `; apps past the proxy in apps.baselineNamespaces (that setting's accepted risk, not counted above): ${sum('baselineBypass')}`,
  );
  if (signalled) return signalled === 'SIGINT' ? 130 : 143;
  return failed === 0 ? 0 : 1;
}

if (isInside()) {
  process.exitCode = await main();
  process.exit(process.exitCode);
} else {
  if (process.getuid?.() === 0) builds(new Timings());
  await reexecIsolated();
}
