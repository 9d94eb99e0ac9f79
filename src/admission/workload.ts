/**
 * The workload routes (`/validate/workloads`, `/validate/workloads/warn`, `/validate/workloads/audit`): a
 * Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job or CronJob — or another kind whose pod
 * template sits at `spec.template` (webhook.workloads.extraRules) — CREATEd or UPDATEd with a new pod template, judged
 * by the pure core as its pods would be admitted (src/policy/mutate/template.ts). So the person applying it reads
 * meshgate's answer at apply time: a refusal with the fix at enforce, a warning with the fix at warn and audit.
 * Pods stay the enforcement point: the chart's workload entries fail open (failurePolicy Ignore), and a template
 * admitted here may still see its pods refused for what only a pod shows (its node, the injector's output).
 */
import { isDeepStrictEqual } from 'node:util';
import type { ReasonCode } from '../contract/reasons.ts';
import { adviceFor } from '../policy/mutate/advice.ts';
import { judgeTemplate } from '../policy/mutate/template.ts';
import { podTemplates } from '../manifests/workloads.ts';
import { isObject } from '../util/json.ts';
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import type { NamespaceLabels } from '../kube/namespace-labels.ts';
import type { Level } from './level.ts';
import type { AdmissionRequest, Verdict } from './review.ts';

type Template = { metadata?: unknown; spec?: unknown };

/** The object's pod template: where its kind keeps it, else (another kind) at spec.template; undefined: none. */
export function templateOf(object: unknown): Template | undefined {
  if (!isObject(object)) return undefined;
  const known = typeof object.kind === 'string' ? podTemplates(object) : [];
  if (known.length === 1) return known[0].template;
  const t = isObject(object.spec) ? object.spec.template : undefined;
  return isObject(t) && isObject(t.spec) && Array.isArray(t.spec.containers) ? t : undefined;
}

/** How a message names the workload: `Deployment shop/web`. */
function describe(r: AdmissionRequest, namespace: string): string {
  const meta = isObject(r.object) && isObject(r.object.metadata) ? r.object.metadata : {};
  const name = r.name || (typeof meta.name === 'string' ? meta.name : `${meta.generateName ?? ''}*`);
  return `${r.kind.kind} ${namespace}/${name}`;
}

export function judgeWorkload(
  r: AdmissionRequest,
  deps: { config: Compiled; nodes: NodeFacts; namespaces?: NamespaceLabels },
  level: Level,
): Verdict {
  if ((r.operation !== 'CREATE' && r.operation !== 'UPDATE') || r.subResource)
    return { kind: 'allow', reason: 'no_pod_template' };
  const template = templateOf(r.object);
  if (!template) return { kind: 'allow', reason: 'no_pod_template' };
  // Scaling, labels, a status-like field: the pods its controller creates stay what they were.
  if (r.operation === 'UPDATE' && isDeepStrictEqual(template, templateOf(r.oldObject)))
    return { kind: 'allow', reason: 'template_unchanged' };
  const namespace = r.namespace ?? 'default';
  const what = describe(r, namespace);
  const where = `${what}: its pod template`;
  const j = judgeTemplate(template, namespace, where, deps.nodes, deps.config, deps.namespaces?.get(namespace));
  if (j.kind === 'admitted') {
    const warnings = j.warnings.map((w) => `${what}: ${w}`);
    return { kind: 'allow', reason: j.reason, ...(warnings.length ? { warnings } : {}) };
  }
  return atLevel(level, what, namespace, j.reason, j.message);
}

/** A refused template at the namespace's level: refused at enforce, a warning with the fix below it. */
function atLevel(level: Level, what: string, namespace: string, reason: ReasonCode, message: string): Verdict {
  const fix = adviceFor(reason);
  if (level === 'enforce')
    return { kind: 'deny', reason, message: `${what}: its pods would be refused: ${message}; to fix: ${fix}` };
  const warning =
    `${what}: its pods would be refused at enforce [${reason}]: ${message}; to fix: ${fix}. ` +
    `Namespace ${namespace} is at ${level}: they are admitted, and recorded (meshgate check --audit)`;
  return { kind: 'allow', reason, warnings: [warning], audited: { level, message } };
}
