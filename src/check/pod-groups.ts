/**
 * Flagged pods grouped by what to act on: the workload that owns them (the pods of all ReplicaSets of one Deployment
 * together), or the pod itself when nothing owns it, per kind of finding. Shared by `meshgate check`'s pod results
 * (judge-pods.ts) and `check --pre` (preflight-pods.ts). Only flagged pods are kept: bounded by what is wrong, not by
 * the cluster's size (names beyond a few are counted, not listed, in the messages; JSON keeps them). Pure.
 */
import type { Owner } from './facts.ts';
import type { PodRecord } from './facts.ts';
import type { Item, Status } from './report.ts';

export interface Group<K extends string> {
  kind: K;
  namespace: string;
  owner?: Owner;
  pods: string[];
  reasons: Set<string>;
  /** The first flagged pod's message: one per group, the pods of a workload share their template. */
  message: string;
  /** What to change so enforce admits the group's pods (src/policy/checklist.ts), each once, in order. */
  changes: Set<string>;
}

/** Kinds `kubectl rollout restart` knows; pods of anything else are deleted for their controller to recreate. */
const RESTARTABLE = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);

export class PodGroups<K extends string> {
  readonly #groups = new Map<string, Group<K>>();

  /** Adds a pod under `kind`, grouped with the other pods of its owner, with the changes it needs. */
  flag(kind: K, p: PodRecord, reason: string, message: string, changes: readonly string[] = []): true {
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
      changes: new Set<string>(),
    };
    if (!g.pods.includes(p.name)) g.pods.push(p.name);
    g.reasons.add(reason);
    for (const c of changes) g.changes.add(c);
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
   * The groups with each ReplicaSet replaced by its Deployment, merged.
   * @param rsOwners "namespace/replicaset" → the ReplicaSet's own controller (a Deployment), when it has one
   */
  merged(rsOwners: ReadonlyMap<string, Owner | undefined>): Group<K>[] {
    const merged = new Map<string, Group<K>>();
    for (const g of this.#groups.values()) {
      const owner =
        g.owner?.kind === 'ReplicaSet' ? (rsOwners.get(`${g.namespace}/${g.owner.name}`) ?? g.owner) : g.owner;
      const key = `${g.kind}/${g.namespace}/${owner ? `${owner.kind}/${owner.name}` : `Pod/${g.pods[0]}`}`;
      const prev = merged.get(key);
      if (prev) {
        prev.pods.push(...g.pods);
        for (const r of g.reasons) prev.reasons.add(r);
        for (const c of g.changes) prev.changes.add(c);
      } else {
        merged.set(key, { ...g, owner, pods: [...g.pods], reasons: new Set(g.reasons), changes: new Set(g.changes) });
      }
    }
    return [...merged.values()];
  }
}

export const workloads = (n: number) => (n === 1 ? '1 workload runs' : `${n} workloads run`);

/** Names in a message: the first few, then how many more. */
function preview(pods: string[]): string {
  const shown = 3;
  return pods.length <= shown ? pods.join(', ') : `${pods.slice(0, shown).join(', ')}, … ${pods.length - shown} more`;
}

/**
 * One item per group. `restart`: the command that recreates the pods (a rollout restart of their workload, else
 * deleting them), for findings a restart fixes; without it the item names what to change instead (`advice`).
 */
export function describeGroup<K extends string>(
  g: Group<K>,
  status: Status,
  o: { restart: boolean; advice?: string },
): Item {
  const reason = [...g.reasons].join(',');
  const { namespace: ns, owner } = g;
  const changes = g.changes.size ? { changes: [...g.changes] } : {};
  const pods = `${g.pods.length} pod${g.pods.length === 1 ? '' : 's'} (${preview(g.pods)})`;
  const advice = o.advice ? `; to fix: ${o.advice}` : '';
  if (owner && RESTARTABLE.has(owner.kind)) {
    const ref = `${owner.kind.toLowerCase()}/${owner.name}`;
    const item: Item = { name: `${ns}/${ref}`, status, reason, message: `${pods}: ${g.message}${advice}`, ...changes };
    return o.restart ? { ...item, command: `kubectl -n ${ns} rollout restart ${ref}` } : item;
  }
  const command = o.restart ? `kubectl -n ${ns} delete pod ${g.pods.join(' ')}` : undefined;
  if (owner) {
    return {
      name: `${ns}/${owner.kind.toLowerCase()}/${owner.name}`,
      status,
      reason,
      message: `${pods}: ${g.message}${advice}${o.restart ? ` (its ${owner.kind} recreates deleted pods)` : ''}`,
      ...changes,
      ...(command ? { command } : {}),
    };
  }
  return {
    name: `${ns}/pod/${g.pods[0]}`,
    status,
    reason,
    message:
      `${g.message}${advice}` +
      (o.restart ? ' (a bare pod: nothing recreates it; apply its manifest again after deleting it)' : ''),
    ...changes,
    ...(command ? { command } : {}),
  };
}
