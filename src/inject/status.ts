/**
 * The `meshgate.io/status` annotation: exactly what meshgate added (or removed) and why, so the validating
 * webhook can check the spec really contains it, and people can read what happened with `kubectl get pod`.
 */
import { STATUS_ANNOTATION } from './constants.ts';
import type { ReasonCode } from './reasons.ts';

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
  /** Another mesh's init container removed in CNI mode (enforce-only). */
  removedInitContainers?: string[];
  affinity: boolean;
}

export function encodeStatus(s: InjectionStatus): string {
  return JSON.stringify(s);
}

/** Parses the annotation; undefined when absent, an error string when present but not meshgate's format. */
export function readStatus(annotations: Record<string, string> | undefined): InjectionStatus | undefined | { error: string } {
  const raw = annotations?.[STATUS_ANNOTATION];
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as InjectionStatus;
    if (v?.version !== 1 || (v.mode !== 'cni' && v.mode !== 'init') || !Array.isArray(v.initContainers) || !Array.isArray(v.containers)) {
      return { error: `annotation ${STATUS_ANNOTATION} is not a meshgate status (version 1)` };
    }
    return v;
  } catch {
    return { error: `annotation ${STATUS_ANNOTATION} is not JSON` };
  }
}
