/**
 * The `meshgate.io/status` annotation: what meshgate added (or removed) and why, so people can read what happened
 * with `kubectl get pod`, and the validating webhook can check it against the containers (an annotation is pod
 * input too: one that lies about the pod is refused).
 */
import { REDIRECT_LABEL, STATUS_ANNOTATION } from '../contract/names.ts';
import type { ReasonCode } from '../contract/reasons.ts';
import type { Allowed } from './redirect.ts';

export interface InjectionStatus {
  version: 1;
  mode: 'cni' | 'init';
  reason: ReasonCode;
  node?: string;
  nativeSidecar: boolean;
  /** Containers meshgate put in spec.initContainers / spec.containers, by name. */
  initContainers: string[];
  containers: string[];
  volumes: string[];
  /** The mesh's privileged init container, removed in CNI mode (companion profiles). */
  removedInitContainers?: string[];
  affinity: boolean;
}

/** The status, and the label and annotation that carry it. */
export interface Recorded {
  status: InjectionStatus;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export function recordStatus(
  r: Allowed,
  added: { init: string[]; containers: string[]; volumes: string[] },
  removed: readonly string[],
  native: boolean,
): Recorded {
  const status: InjectionStatus = {
    version: 1,
    mode: r.kind,
    reason: r.reason,
    nativeSidecar: native,
    initContainers: added.init,
    containers: added.containers,
    volumes: added.volumes,
    affinity: r.kind === 'cni' && r.affinity,
  };
  if (r.node) status.node = r.node;
  if (removed.length) status.removedInitContainers = [...removed];
  return { status, labels: { [REDIRECT_LABEL]: r.kind }, annotations: { [STATUS_ANNOTATION]: JSON.stringify(status) } };
}

/** Parses the annotation; undefined when absent, an error string when present but not meshgate's format. */
export function readStatus(
  annotations: Readonly<Record<string, string>> | undefined,
): InjectionStatus | undefined | { error: string } {
  const raw = annotations?.[STATUS_ANNOTATION];
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as InjectionStatus;
    if (
      v?.version !== 1 ||
      (v.mode !== 'cni' && v.mode !== 'init') ||
      !Array.isArray(v.initContainers) ||
      !Array.isArray(v.containers)
    ) {
      return { error: `annotation ${STATUS_ANNOTATION} is not a meshgate status (version 1)` };
    }
    return v;
  } catch {
    return { error: `annotation ${STATUS_ANNOTATION} is not JSON` };
  }
}
