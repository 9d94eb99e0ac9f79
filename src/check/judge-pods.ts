/**
 * Finds the running pods of opted-in namespaces that meshgate would not admit as they are (no real proxy, no
 * redirect, a CNI-mode pod on a node no longer verified: the validating webhook's own posture check,
 * policy/posture.ts) or that never went through its mutating webhook (no meshgate.io/status), and says how to
 * restart them: by their owner (`kubectl rollout restart deployment/web`), or by deleting the pod. Pods are fed
 * page by page and only the flagged ones are kept, so 50,000 pods are judged in bounded memory. Pure.
 */
import type { Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { MIRROR_ANNOTATION, STATUS_ANNOTATION } from '../inject/constants.ts';
import type { ReasonCode } from '../inject/reasons.ts';
import { parsePod } from '../pod/parse.ts';
import { checkPosture } from '../policy/posture.ts';
import { screen } from '../policy/screen.ts';
import type { Owner } from './facts.ts';
import { guardsPod, type OptedIn } from './judge-namespaces.ts';
import { result, type CheckResult, type Item } from './report.ts';

export interface PodRecord {
  namespace: string;
  name: string;
  /** The pod as the API returned it (typed or plain JSON: parsePod checks the fields it reads). */
  object: unknown;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  phase?: string;
  deleting: boolean;
  /** The controller ownerReference. */
  owner?: Owner;
  nodeName?: string;
}

type Kind = 'pods_redirected' | 'pods_admitted';

interface Group {
  kind: Kind;
  namespace: string;
  owner?: Owner;
  pods: string[];
  reasons: Set<string>;
  message: string;
}

/** Kinds `kubectl rollout restart` knows; pods of anything else are deleted for their controller to recreate. */
const RESTARTABLE = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);

export class PodTally {
  readonly #opted: Map<string, OptedIn>;
  readonly #nodes: NodeFacts;
  readonly #cfg: Compiled;
  readonly #groups = new Map<string, Group>();
  #judged = 0;

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
    this.#judged++;
    const parsed = parsePod(p.object, `pod ${p.namespace}/${p.name}`);
    if (!parsed.ok) return this.#flag('pods_redirected', p, 'invalid_object', parsed.error);
    // Only a node's kubelet creates mirror pods; they carry an owner reference to their Node.
    const requester =
      p.annotations?.[MIRROR_ANNOTATION] !== undefined && p.owner?.kind === 'Node' && p.nodeName
        ? `system:node:${p.nodeName}`
        : undefined;
    const input = { pod: parsed.pod, namespace: p.namespace, requester };
    if (screen(input, this.#cfg).kind === 'skip') return false;
    const posture = checkPosture(input, this.#nodes, this.#cfg);
    if (!posture.ok) return this.#flag('pods_redirected', p, posture.reason, posture.message);
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

  #flag(kind: Kind, p: PodRecord, reason: ReasonCode | 'status_missing', message: string): true {
    const key =
      p.owner && p.owner.kind !== 'Node'
        ? `${kind}/${p.namespace}/${p.owner.kind}/${p.owner.name}`
        : `${kind}/${p.namespace}/Pod/${p.name}`;
    const g = this.#groups.get(key) ?? {
      kind,
      namespace: p.namespace,
      owner: p.owner?.kind === 'Node' ? undefined : p.owner,
      pods: [],
      reasons: new Set<string>(),
      message,
    };
    g.pods.push(p.name);
    g.reasons.add(reason);
    this.#groups.set(key, g);
    return true;
  }

  /** ReplicaSets owning flagged pods: the reader finds their Deployment, which is what to restart. */
  replicaSets(): Array<{ namespace: string; name: string }> {
    const seen = new Map<string, { namespace: string; name: string }>();
    for (const g of this.#groups.values()) {
      if (g.owner?.kind === 'ReplicaSet')
        seen.set(`${g.namespace}/${g.owner.name}`, { namespace: g.namespace, name: g.owner.name });
    }
    return [...seen.values()];
  }

  /**
   * The two results, with one item per workload to restart (the pods of all ReplicaSets of one Deployment together).
   * @param rsOwners "namespace/replicaset" → the ReplicaSet's own controller (a Deployment), when it has one
   */
  results(rsOwners: ReadonlyMap<string, Owner | undefined>, haveNamespaces: boolean): CheckResult[] {
    if (!haveNamespaces) {
      return (['pods_redirected', 'pods_admitted'] as const).map((code) => ({
        code,
        status: 'skip' as const,
        message: 'not checked: no namespace is opted in',
      }));
    }
    const merged = new Map<string, Group>();
    for (const g of this.#groups.values()) {
      const owner =
        g.owner?.kind === 'ReplicaSet' ? (rsOwners.get(`${g.namespace}/${g.owner.name}`) ?? g.owner) : g.owner;
      const key = `${g.kind}/${g.namespace}/${owner ? `${owner.kind}/${owner.name}` : `Pod/${g.pods[0]}`}`;
      const prev = merged.get(key);
      if (prev) {
        prev.pods.push(...g.pods);
        for (const r of g.reasons) prev.reasons.add(r);
      } else {
        merged.set(key, { ...g, owner, pods: [...g.pods], reasons: new Set(g.reasons) });
      }
    }
    const items = [...merged.values()].map((g) => ({ kind: g.kind, item: describeGroup(g) }));
    const of = (k: Kind) => items.filter((i) => i.kind === k).map((i) => i.item);
    const redirected = of('pods_redirected');
    const admitted = of('pods_admitted');
    const judged = `${this.#judged} pod${this.#judged === 1 ? '' : 's'} judged`;
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
    ];
  }
}

const workloads = (n: number) => (n === 1 ? '1 workload runs' : `${n} workloads run`);

/** Names in a message: the first few, then how many more. */
function preview(pods: string[]): string {
  const shown = 3;
  return pods.length <= shown ? pods.join(', ') : `${pods.slice(0, shown).join(', ')}, … ${pods.length - shown} more`;
}

function describeGroup(g: Group): Item {
  const status = g.kind === 'pods_redirected' ? 'fail' : 'warn';
  const reason = [...g.reasons].join(',');
  const { namespace: ns, owner } = g;
  const pods = `${g.pods.length} pod${g.pods.length === 1 ? '' : 's'} (${preview(g.pods)})`;
  if (owner && RESTARTABLE.has(owner.kind)) {
    const ref = `${owner.kind.toLowerCase()}/${owner.name}`;
    return {
      name: `${ns}/${ref}`,
      status,
      reason,
      message: `${pods}: ${g.message}`,
      command: `kubectl -n ${ns} rollout restart ${ref}`,
    };
  }
  const command = `kubectl -n ${ns} delete pod ${g.pods.join(' ')}`;
  if (owner) {
    return {
      name: `${ns}/${owner.kind.toLowerCase()}/${owner.name}`,
      status,
      reason,
      message: `${pods}: ${g.message} (its ${owner.kind} recreates deleted pods)`,
      command,
    };
  }
  return {
    name: `${ns}/pod/${g.pods[0]}`,
    status,
    reason,
    message: `${g.message} (a bare pod: nothing recreates it; apply its manifest again after deleting it)`,
    command,
  };
}
