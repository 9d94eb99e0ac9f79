/**
 * What meshgate records on a pod it patches: the status annotation (inject/status.ts), its JSON and the
 * redirect label, built once per config and decision and shared (frozen), so their JSON is cached with them.
 */
import type { MeshgateConfig } from '../config/types.ts';
import { REDIRECT_LABEL, STATUS_ANNOTATION } from './constants.ts';
import type { Container } from './pod.ts';
import type { RedirectDecision } from './redirect.ts';
import { encodeStatus, type InjectionStatus } from './status.ts';
import { deepFreeze } from '../util/json.ts';
import { cached } from '../util/cache.ts';

export type Allowed = Exclude<RedirectDecision, { kind: 'deny' }>;

/** The status, its annotation value and the label value, recorded together. */
export interface Recorded {
  status: InjectionStatus;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/**
 * Statuses per config and decision. A status holds names and the decision, nothing else of the pod, so the
 * handful that recur are built and encoded once, frozen, and their JSON is cached with them (util/json.ts).
 * Bounded: node names are part of some decisions.
 */
const recordedStatuses = new WeakMap<MeshgateConfig, Map<string, Recorded>>();
/** The same, by identity, for the shared decisions that name no node (inject/redirect.ts): no key to build. */
const recordedByDecision = { inject: new WeakMap<MeshgateConfig, WeakMap<Allowed, Recorded>>(), enforce: new WeakMap<MeshgateConfig, WeakMap<Allowed, Recorded>>() };

export function recordStatus(source: 'inject' | 'enforce', r: Allowed, inits: Container[], containers: Container[], cfg: MeshgateConfig, removed: string[]): Recorded {
  // Which containers are added follows from the source, the decision and the config (names are config), so
  // the key needs no names; `removed` comes from the pod and is part of it.
  const byKey = () => statusByKey(source, r, inits, containers, cfg, removed);
  if (!Object.isFrozen(r) || removed.length > 0) return byKey();
  return cached(cached(recordedByDecision[source], cfg, () => new WeakMap<Allowed, Recorded>()), r, byKey);
}

function statusByKey(source: 'inject' | 'enforce', r: Allowed, inits: Container[], containers: Container[], cfg: MeshgateConfig, removed: string[]): Recorded {
  const choice = r.kind === 'cni' ? r.affinity : r.validate;
  const key = `${source}|${r.kind}|${r.reason}|${r.native}|${choice}|${r.node ?? ''}|${removed.length ? removed.join(',') : ''}`;
  return cached(cached(recordedStatuses, cfg, () => new Map<string, Recorded>()), key, () => {
    const status = buildStatus(r, inits, containers, cfg, removed);
    return deepFreeze({ status, labels: { [REDIRECT_LABEL]: r.kind }, annotations: { [STATUS_ANNOTATION]: encodeStatus(status) } });
  }, 4096);
}

function buildStatus(r: Allowed, inits: Container[], containers: Container[], cfg: MeshgateConfig, removed: string[]): InjectionStatus {
  const s: InjectionStatus = {
    version: 1,
    mode: r.kind,
    reason: r.reason,
    nativeSidecar: r.native,
    initContainers: inits.map((c) => c.name),
    containers: containers.map((c) => c.name),
    volumes: cfg.injection.enabled ? cfg.volumes.map((v) => v.name) : [],
    affinity: r.kind === 'cni' && r.affinity,
  };
  if (r.node) s.node = r.node;
  if (removed.length) s.removedInitContainers = removed;
  return s;
}
