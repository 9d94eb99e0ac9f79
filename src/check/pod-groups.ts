/**
 * Flagged pods grouped by what to act on: the workload that owns them (the pods of all ReplicaSets of one Deployment
 * together), or the pod itself when nothing owns it, per kind of finding. Shared by `meshgate check`'s pod results
 * (judge-pods.ts) and `check --pre` (preflight-pods.ts). Bounded whatever the cluster's size (issue 32): at most
 * ITEMS_KEPT groups per kind (kept.ts), the pods of further workloads counted; at most NAMES_KEPT pod names per
 * group, the others counted. Pure.
 */
import type { Owner } from './facts.ts';
import type { PodRecord } from './facts.ts';
import { count, ITEMS_KEPT } from './kept.ts';
import type { Item, Status } from './report.ts';

/**
 * Pod names a group keeps: the message previews three, and a workload nothing restarts is fixed by deleting its
 * pods by name (the command names the kept ones and says how many there are).
 */
export const NAMES_KEPT = 20;

export interface Group<K extends string> {
  kind: K;
  namespace: string;
  owner?: Owner;
  /** The first NAMES_KEPT pods' names, */
  pods: string[];
  /** and how many pods the group has. */
  count: number;
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
  /** Groups per kind, up to ITEMS_KEPT. */
  readonly #kept = new Map<K, number>();
  /** Pods of groups past ITEMS_KEPT, per kind: counted, not grouped. */
  readonly #omitted = new Map<K, number>();

  /** Adds a pod under `kind`, grouped with the other pods of its owner, with the changes it needs. */
  flag(kind: K, p: PodRecord, reason: string, message: string, changes: readonly string[] = []): true {
    const key =
      p.owner && p.owner.kind !== 'Node'
        ? `${kind}/${p.namespace}/${p.owner.kind}/${p.owner.name}`
        : `${kind}/${p.namespace}/Pod/${p.name}`;
    let g = this.#groups.get(key);
    if (!g) {
      const kept = this.#kept.get(kind) ?? 0;
      if (kept >= ITEMS_KEPT) {
        this.#omitted.set(kind, (this.#omitted.get(kind) ?? 0) + 1);
        return true;
      }
      this.#kept.set(kind, kept + 1);
      g = {
        kind,
        namespace: p.namespace,
        owner: p.owner?.kind === 'Node' ? undefined : p.owner,
        pods: [],
        count: 0,
        reasons: new Set<string>(),
        message,
        changes: new Set<string>(),
      };
      this.#groups.set(key, g);
    }
    if (!g.pods.includes(p.name)) {
      g.count++;
      if (g.pods.length < NAMES_KEPT) g.pods.push(p.name);
    }
    g.reasons.add(reason);
    for (const c of changes) g.changes.add(c);
    return true;
  }

  /** Pods of `kind` in workloads past the first ITEMS_KEPT: counted, not listed. */
  omitted(kind: K): { count: number; of: 'pods' } {
    return { count: this.#omitted.get(kind) ?? 0, of: 'pods' };
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
        prev.pods.push(...g.pods.slice(0, NAMES_KEPT - prev.pods.length));
        prev.count += g.count;
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
function preview(g: { pods: readonly string[]; count: number }): string {
  const shown = 3;
  return g.count <= shown ? g.pods.join(', ') : `${g.pods.slice(0, shown).join(', ')}, … ${g.count - shown} more`;
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
  const pods = `${g.count} pod${g.count === 1 ? '' : 's'} (${preview(g)})`;
  // Pods deleted by name: the command names the kept ones, and says so when there are more.
  const named =
    g.count > g.pods.length ? `; the command names the first ${g.pods.length} of ${count(g.count)} pods` : '';
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
      message: `${pods}: ${g.message}${advice}${o.restart ? ` (its ${owner.kind} recreates deleted pods${named})` : ''}`,
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
