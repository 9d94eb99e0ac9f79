/**
 * Judges the pods of opted-in namespaces, page by page (only the flagged ones are kept, so 50,000 pods are judged in
 * bounded memory), at their namespace's enforcement level (judge-namespaces.ts). Pure. Four findings:
 * - pods_redirected: running pods meshgate would not admit as they are (no real proxy, no redirect, a CNI-mode pod
 *   on a node no longer verified: the validating webhook's own posture check, policy/posture.ts), and Istio ambient
 *   pods that lost ztunnel's capture while running (src/policy/ambient/capture.ts), in a namespace it enforces — with how to
 *   restart them (`kubectl rollout restart deployment/web`, or deleting the pod);
 * - pods_would_be_refused: the same in a namespace at audit or warn, and pods admitted there with a recorded
 *   refusal (meshgate.io/would-deny): what enforce would refuse, with what to fix — the audit report;
 * - pods_admitted: pods that never went through the mutating webhook (no meshgate.io/status);
 * - pods_held: pods meshgate's affinity holds Pending (src/policy/mutate/held.ts), with what to do.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { readWouldDeny } from '../admission/level.ts';
import { adviceFor } from '../policy/mutate/advice.ts';
import { MIRROR_ANNOTATION, STATUS_ANNOTATION } from '../contract/names.ts';
import { heldMessage, heldPending } from '../policy/mutate/held.ts';
import { parsePod } from '../pod/parse.ts';
import { configForNamespace } from '../config/per-namespace.ts';
import { changeText, promotionChecklist } from '../policy/checklist.ts';
import { checkPosture } from '../policy/posture.ts';
import { screen } from '../policy/screen.ts';
import { captureLost, type PodForCapture } from '../policy/ambient/capture.ts';
import type { Owner, PodRecord } from './facts.ts';
import { guardsPod, type OptedIn } from './judge-namespaces.ts';
import { describeGroup, PodGroups, workloads, type Group } from './pod-groups.ts';
import { result, type CheckResult } from './report.ts';

type Kind = 'pods_redirected' | 'pods_admitted' | 'pods_would_be_refused' | 'pods_held';
export const POD_CHECKS: readonly Kind[] = ['pods_redirected', 'pods_would_be_refused', 'pods_admitted', 'pods_held'];

export class PodTally {
  readonly #opted: Map<string, OptedIn>;
  readonly #nodes: NodeFacts;
  readonly #cfg: Compiled;
  readonly #groups = new PodGroups<Kind>();
  /** Pods that would be refused at enforce, per namespace below enforce. */
  readonly #wouldRefuse = new Map<string, number>();
  #judged = 0;

  /** Each namespace's labels: Istio ambient's selectors read them (src/policy/ambient/enrolment.ts). */
  readonly #labels: ReadonlyMap<string, Readonly<Record<string, string>>>;

  constructor(
    opted: readonly OptedIn[],
    nodes: NodeFacts,
    cfg: Compiled,
    labels: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(),
  ) {
    this.#opted = new Map(opted.map((o) => [o.namespace, o]));
    this.#nodes = nodes;
    this.#cfg = cfg;
    this.#labels = labels;
  }

  /** Judges one pod; returns whether it was flagged. */
  add(p: PodRecord): boolean {
    const opted = this.#opted.get(p.namespace);
    if (!opted || !guardsPod(opted.mutating, p.labels)) return false;
    if (p.deleting || (p.phase !== 'Running' && p.phase !== 'Pending')) return false;
    this.#judged++;
    const held = heldPending(p.object);
    if (held) return this.#flag('pods_held', p, held.reason, heldMessage(held));
    const below = opted.level !== 'enforce';
    const refused: Kind = below ? 'pods_would_be_refused' : 'pods_redirected';
    const parsed = parsePod(p.object, `pod ${p.namespace}/${p.name}`);
    if (!parsed.ok) return this.#flag(refused, p, 'invalid_object', parsed.error);
    // Only a node's kubelet creates mirror pods; they carry an owner reference to their Node.
    const requester =
      p.annotations?.[MIRROR_ANNOTATION] !== undefined && p.owner?.kind === 'Node' && p.nodeName
        ? `system:node:${p.nodeName}`
        : undefined;
    const namespaceLabels = this.#labels.get(p.namespace);
    // `existing`: what the mesh writes on running pods is expected (istio-cni's ambient.istio.io/redirection).
    const input = {
      pod: parsed.pod,
      namespace: p.namespace,
      requester,
      existing: true,
      ...(namespaceLabels ? { namespaceLabels } : {}),
    };
    // The namespace's configuration: on OpenShift its proxy IDs (read with the namespace; known here).
    const found = configForNamespace(this.#cfg, p.namespace, () => opted.proxyIds);
    const cfg = found.ok ? found.cfg : this.#cfg;
    if (screen(input, cfg).kind === 'skip') return false;
    // Istio ambient: a pod that lost ztunnel's capture while running (issue 33 §6), whatever admission would say now.
    const lost = cfg.config.ambient.enabled ? captureLost(p.object as PodForCapture, cfg.names.validator) : undefined;
    if (lost) return this.#flag(refused, p, 'ambient_capture_lost', lost.message);
    const posture = checkPosture(input, this.#nodes, cfg);
    const recorded = readWouldDeny(p.labels, p.annotations);
    // Every change the pod's own spec needs, not only the refusal named (src/policy/checklist.ts).
    const changes = () => promotionChecklist(parsed.pod, p.namespace, cfg).map(changeText);
    if (!posture.ok) return this.#flag(refused, p, posture.reason, posture.message, changes());
    if (recorded) {
      const at = `admitted at level ${recorded.level}, refused at enforce: ${recorded.message}`;
      return this.#flag('pods_would_be_refused', p, recorded.reason, at, changes());
    }
    if (p.annotations?.[STATUS_ANNOTATION] === undefined) {
      return this.#flag(
        'pods_admitted',
        p,
        'status_missing',
        `no ${STATUS_ANNOTATION} annotation: meshgate's mutating webhook never chose this pod's redirect`,
      );
    }
    return false;
  }

  #flag(kind: Kind, p: PodRecord, reason: string, message: string, changes: readonly string[] = []): true {
    if (kind === 'pods_would_be_refused')
      this.#wouldRefuse.set(p.namespace, (this.#wouldRefuse.get(p.namespace) ?? 0) + 1);
    return this.#groups.flag(kind, p, reason, message, changes);
  }

  /** ReplicaSets owning flagged pods: the reader finds their Deployment, which is what to restart. */
  replicaSets(): Array<{ namespace: string; name: string }> {
    return this.#groups.replicaSets();
  }

  /** Pods that would be refused at enforce, by namespace (for the enforcement_level check). */
  wouldRefuse(): ReadonlyMap<string, number> {
    return this.#wouldRefuse;
  }

  /**
   * The four results, with one item per workload to act on (the pods of all ReplicaSets of one Deployment together).
   * @param rsOwners "namespace/replicaset" → the ReplicaSet's own controller (a Deployment), when it has one
   */
  results(rsOwners: ReadonlyMap<string, Owner | undefined>, haveNamespaces: boolean): CheckResult[] {
    if (!haveNamespaces) {
      return POD_CHECKS.map((code) => ({
        code,
        status: 'skip' as const,
        message: 'not checked: no namespace is opted in',
      }));
    }
    const groups = this.#groups.merged(rsOwners);
    const of = (k: Kind) => groups.filter((g) => g.kind === k);
    const judged = `${this.#judged} pod${this.#judged === 1 ? '' : 's'} judged`;
    const redirected = of('pods_redirected').map((g) => describeGroup(g, 'fail', { restart: true, advice: advice(g) }));
    const admitted = of('pods_admitted').map((g) => describeGroup(g, 'warn', { restart: true }));
    const would = of('pods_would_be_refused').map((g) =>
      describeGroup(g, 'warn', { restart: false, advice: advice(g) }),
    );
    const held = of('pods_held').map((g) => describeGroup(g, 'warn', { restart: false }));
    const below = [...this.#opted.values()].filter((o) => o.mutating.length && o.level !== 'enforce').length;
    return [
      redirected.length
        ? result(
            'pods_redirected',
            'fail',
            `${workloads(redirected.length)} pods without a redirect meshgate accepts (${judged})`,
            redirected,
          )
        : result(
            'pods_redirected',
            'ok',
            `every running pod in opted-in namespaces is meshed as meshgate requires (${judged})`,
          ),
      would.length
        ? result(
            'pods_would_be_refused',
            'warn',
            `${workloads(would.length)} pods meshgate admitted below enforce or would refuse at enforce`,
            would,
          )
        : result(
            'pods_would_be_refused',
            'ok',
            below
              ? `no pod in the ${below} namespace${below === 1 ? '' : 's'} below enforce would be refused (${judged})`
              : 'every guarded namespace is at enforce: nothing is admitted that meshgate would refuse',
          ),
      admitted.length
        ? result(
            'pods_admitted',
            'warn',
            `${workloads(admitted.length)} pods meshgate's mutating webhook never saw`,
            admitted,
          )
        : result(
            'pods_admitted',
            'ok',
            `every running pod in opted-in namespaces carries meshgate's status (${judged})`,
          ),
      held.length
        ? result('pods_held', 'warn', `${workloads(held.length)} pods meshgate holds Pending`, held)
        : result('pods_held', 'ok', 'no pod is held Pending by meshgate'),
    ];
  }
}

/** What to fix for each of a group's reasons, once each. */
function advice(g: Group<Kind>): string | undefined {
  const texts = [...new Set([...g.reasons].filter((r) => r !== 'invalid_object').map(adviceFor))];
  return texts.length ? texts.join('; ') : undefined;
}
