/**
 * One pod template judged as its pods will arrive (issue 34 §5), for `meshgate explain` offline and live: meshgate's
 * core on the template; where that waits for the mesh's own injector (no_proxy_yet, companion profiles), the
 * injector simulated from the mesh's ConfigMaps (explain-simulate.ts) and meshgate's core again on its result — or,
 * when the injector would not inject the pod, meshgate's validating webhook on the pod as it is. Every simulated
 * answer says so, with what the simulation may differ in.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import type { Decision } from '../policy/mutate/decide.ts';
import type { PodTemplateRef } from '../manifests/workloads.ts';
import type { SimulationContext } from '../mesh/simulate/types.ts';
import { parsePod } from '../pod/parse.ts';
import { checkPosture } from '../policy/posture.ts';
import { describeDecision } from './describe-decision.ts';
import { InputError } from './documents.ts';
import { type MeshInjectors, simulateMesh } from './explain-simulate.ts';
import { decideTemplate, templateChecklist } from './offline.ts';
import type { RedirectOptions } from '../policy/redirect.ts';

export interface Simulation {
  by?: string;
  injected: boolean;
  /** Why the injector leaves the pod alone, or why it could not be simulated. */
  why?: string;
  differs?: string[];
}

export interface Judged {
  decision: Decision;
  lines: string[];
  simulation?: Simulation;
  /** Under a refusal, every change that makes the pods admissible (src/policy/checklist.ts). */
  changes?: string[];
}

const API_VERSION: Readonly<Record<string, string>> = {
  Pod: 'v1',
  Deployment: 'apps/v1',
  StatefulSet: 'apps/v1',
  DaemonSet: 'apps/v1',
  ReplicaSet: 'apps/v1',
  ReplicationController: 'v1',
  Job: 'batch/v1',
  CronJob: 'batch/v1',
};

/** What the mesh's injectors read of the cluster for one template. */
export function simulationContext(
  ref: PodTemplateRef,
  namespace: string,
  nativeSidecars: boolean,
  ns?: { labels?: Record<string, string>; annotations?: Record<string, string> },
): SimulationContext {
  return {
    namespace,
    nativeSidecars,
    ...(ns ? { namespaceLabels: ns.labels ?? {}, namespaceAnnotations: ns.annotations ?? {} } : {}),
    owner: { apiVersion: API_VERSION[ref.kind] ?? 'v1', kind: ref.kind, name: ref.name },
  };
}

/** The validating webhook's answer for a pod nobody injected, as a decision. */
function posture(ref: PodTemplateRef, where: string, facts: NodeFacts, cfg: Compiled, namespace: string): Decision {
  const parsed = parsePod(
    { metadata: ref.template.metadata, spec: { ...ref.template.spec } },
    `${ref.kind} ${ref.name}`,
  );
  if (!parsed.ok) throw new InputError(`${where}: not a valid pod template: ${parsed.error}`);
  const p = checkPosture({ pod: parsed.pod, namespace }, facts, cfg);
  return p.ok ? { kind: 'skip', reason: p.reason } : { kind: 'deny', reason: p.reason, message: p.message };
}

function judgeOnce(
  ref: PodTemplateRef,
  where: string,
  facts: NodeFacts,
  cfg: Compiled,
  injectors: MeshInjectors | undefined,
  ctx: SimulationContext,
  nodeName?: string,
  o: RedirectOptions = {},
): Judged {
  const first = decideTemplate(ref, where, facts, cfg, nodeName, o);
  if (first.kind !== 'skip' || first.reason !== 'no_proxy_yet')
    return { decision: first, lines: describeDecision(first) };
  if (!injectors) {
    return {
      decision: first,
      lines: [
        ...describeDecision(first),
        "the mesh's injector was not simulated: give its ConfigMaps with --mesh-config FILE (offline) to judge the pods as they will arrive",
      ],
      simulation: { injected: false, why: 'no mesh configuration given' },
    };
  }
  const sim = simulateMesh(injectors, cfg, ref.template, ctx);
  if (sim.kind === 'unavailable')
    return {
      decision: first,
      lines: [...describeDecision(first), `the mesh's injector was not simulated: ${sim.why}`],
      simulation: { injected: false, why: sim.why },
    };
  if (sim.kind === 'not-injected') {
    const d = posture(ref, where, facts, cfg, ctx.namespace);
    return {
      decision: d,
      lines: [
        `simulated ${sim.by}: it does not inject the pod (${sim.why}); then meshgate's validating webhook:`,
        ...describeDecision(d).map((l) => `  ${l}`),
      ],
      simulation: { by: sim.by, injected: false, why: sim.why },
    };
  }
  const injected: PodTemplateRef = { ...ref, template: sim.pod as PodTemplateRef['template'] };
  const d = decideTemplate(injected, where, facts, cfg, nodeName, o);
  return {
    decision: d,
    lines: [
      `simulated ${sim.by}: it injects the pod; then meshgate:`,
      ...describeDecision(d).map((l) => `  ${l}`),
      `  (a simulation, which may differ from the real injector: ${sim.differs.join('; ')})`,
    ],
    simulation: { by: sim.by, injected: true, differs: sim.differs },
  };
}

/**
 * `judgeOnce`, and under a refusal every change the template's own spec needs (src/policy/checklist.ts) under its
 * lines, so one pass over the workload suffices.
 */
export function explainTemplate(
  ref: PodTemplateRef,
  where: string,
  facts: NodeFacts,
  cfg: Compiled,
  injectors: MeshInjectors | undefined,
  ctx: SimulationContext,
  nodeName?: string,
  o: RedirectOptions = {},
): Judged {
  const j = judgeOnce(ref, where, facts, cfg, injectors, ctx, nodeName, o);
  if (j.decision.kind !== 'deny') return j;
  const changes = templateChecklist(ref, cfg);
  if (changes.length === 0) return j;
  return {
    ...j,
    changes,
    lines: [...j.lines, '  to be admitted, change:', ...changes.map((c) => `    - ${c}`)],
  };
}
