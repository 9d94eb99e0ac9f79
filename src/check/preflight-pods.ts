/**
 * `meshgate check --pre`'s judgement of existing pods: each pod of a namespace the chart would guard, as its
 * controller would create it again (spec.nodeName dropped: the scheduler binds a recreated pod; a DaemonSet's pod
 * keeps the affinity that pins its node), through what both webhooks would do at CREATE — the mutating decision
 * (inject/decide.ts), its patch applied, then the validating posture check (policy/posture.ts) — with the node
 * verdicts as they are now. Refused pods are grouped by workload with the reason and what to fix; adjusted ones
 * with what meshgate would change (redirect mode, pinned to verified nodes). Pure; only flagged pods are kept.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { adviceFor } from '../policy/mutate/advice.ts';
import { MIRROR_ANNOTATION } from '../contract/names.ts';
import { asAdmitted } from '../policy/mutate/admitted.ts';
import { reasonText, type ReasonCode } from '../contract/reasons.ts';
import { parsePod } from '../pod/parse.ts';
import { configForNamespace } from '../config/per-namespace.ts';
import { changeText, promotionChecklist } from '../policy/checklist.ts';
import type { Owner } from './facts.ts';
import { guardsPod, type OptedIn } from './judge-namespaces.ts';
import type { PodRecord } from './facts.ts';
import { describeGroup, PodGroups, workloads } from './pod-groups.ts';
import { result, type CheckResult } from './report.ts';

type Kind = 'pods_would_refuse' | 'pods_would_adjust';

export class PreflightTally {
  readonly #opted: Map<string, OptedIn>;
  readonly #nodes: NodeFacts;
  readonly #cfg: Compiled;
  readonly #groups = new PodGroups<Kind>();
  #judged = 0;
  /** Refusals in namespaces that would be at enforce: an outage at their next rollout. */
  #enforced = 0;

  constructor(opted: readonly OptedIn[], nodes: NodeFacts, cfg: Compiled) {
    this.#opted = new Map(opted.map((o) => [o.namespace, o]));
    this.#nodes = nodes;
    this.#cfg = cfg;
  }

  /** Judges one pod; returns whether it was flagged. */
  add(p: PodRecord): boolean {
    const opted = this.#opted.get(p.namespace);
    if (!opted || !guardsPod(opted.mutating, p.labels)) return false;
    if (p.deleting || (p.phase !== 'Running' && p.phase !== 'Pending')) return false;
    // Static pods are created by their node's kubelet, not by a controller through the webhooks.
    if (p.owner?.kind === 'Node' || p.annotations?.[MIRROR_ANNOTATION] !== undefined) return false;
    this.#judged++;
    // The namespace's configuration: on OpenShift its proxy IDs (src/config/per-namespace.ts).
    const found = configForNamespace(this.#cfg, p.namespace, () => opted.proxyIds);
    const cfg = found.ok ? found.cfg : this.#cfg;
    const refuse = (reason: string, message: string, checklist: string[] = []) => {
      if (opted.level === 'enforce') this.#enforced++;
      return this.#groups.flag('pods_would_refuse', p, reason, message, checklist);
    };
    const raw = structuredClone(p.object) as { spec?: { nodeName?: string }; status?: unknown };
    delete raw.status;
    if (raw.spec) delete raw.spec.nodeName;
    const where = `pod ${p.namespace}/${p.name}`;
    const admitted = asAdmitted(raw, p.namespace, where, this.#nodes, cfg);
    if (admitted.kind === 'refused') {
      // Every change the pod's own spec needs (src/policy/checklist.ts), so one pass over the workload suffices.
      const parsed = parsePod(raw, where);
      const checklist = parsed.ok ? promotionChecklist(parsed.pod, p.namespace, cfg).map(changeText) : [];
      return refuse(admitted.reason, admitted.message, checklist);
    }
    const d = admitted.decision;
    if (d.kind === 'patch') {
      const pinned = d.status.affinity ? ', pinned to verified nodes' : '';
      const what = `redirect mode ${d.status.mode}${pinned}: ${reasonText(d.reason as ReasonCode)}`;
      return this.#groups.flag('pods_would_adjust', p, d.reason, what);
    }
    return false;
  }

  replicaSets(): Array<{ namespace: string; name: string }> {
    return this.#groups.replicaSets();
  }

  results(rsOwners: ReadonlyMap<string, Owner | undefined>): CheckResult[] {
    const groups = this.#groups.merged(rsOwners);
    const judged = `${this.#judged} pod${this.#judged === 1 ? '' : 's'} judged`;
    const refused = groups
      .filter((g) => g.kind === 'pods_would_refuse')
      .map((g) =>
        describeGroup(g, this.#opted.get(g.namespace)?.level === 'enforce' ? 'fail' : 'warn', {
          restart: false,
          advice: [...new Set([...g.reasons].map(adviceFor))].join('; '),
        }),
      );
    const adjusted = groups
      .filter((g) => g.kind === 'pods_would_adjust')
      .map((g) => describeGroup(g, 'ok', { restart: false }));
    const at = this.#enforced
      ? `; ${this.#enforced} of them in namespaces that would be at enforce`
      : ': their namespaces would be below enforce, so they would be recorded, not refused';
    return [
      refused.length
        ? result(
            'pods_would_refuse',
            this.#enforced ? 'fail' : 'warn',
            `${workloads(refused.length)} pods meshgate would refuse when recreated (${judged})${at}`,
            refused,
          )
        : result('pods_would_refuse', 'ok', `no existing pod would be refused when recreated (${judged})`),
      result(
        'pods_would_adjust',
        'ok',
        adjusted.length
          ? `${workloads(adjusted.length)} pods meshgate would adjust when recreated`
          : 'no existing pod would be adjusted',
        adjusted,
      ),
    ];
  }
}
