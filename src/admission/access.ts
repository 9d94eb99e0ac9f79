/**
 * The validating webhook's answer to `kubectl exec` and `kubectl attach` in a guarded namespace (a CONNECT of
 * pods/exec or pods/attach; the chart's `…connect.meshgate.io` entries send only those naming a mesh container or
 * none): the pure judgement of src/policy/validate/access.ts as a Verdict, and the record of each access to a mesh
 * container — who, which container, what command, and what came of it at the namespace's level — for the Event the
 * server posts on the pod (src/kube/access-events.ts). The reason code is the apiserver's audit annotation
 * (meshgate.io/reason) on the request either way.
 */
import type { Compiled } from '../config/compile.ts';
import { describeCommand, judgeAccess, type AccessRequest } from '../policy/validate/access.ts';
import type { Level } from './level.ts';
import { accessInput } from './pod-request.ts';
import type { AdmissionRequest, Verdict } from './review.ts';

export function validateAccess(r: AdmissionRequest, cfg: Compiled): Verdict {
  const input = accessInput(r);
  if (!input.ok) return input.verdict;
  const v = judgeAccess(input.value, cfg);
  if (!v.ok) return { kind: 'deny', reason: v.reason, message: v.message };
  if (v.debugger === undefined) return { kind: 'allow', reason: v.reason };
  const what = input.value.container ? `container ${input.value.container}` : 'the pod';
  return {
    kind: 'allow',
    reason: v.reason,
    warnings: [
      `${what} of ${input.value.namespace}/${input.value.pod} is one of the mesh's: you may reach it as ` +
        `${v.debugger} (access.debuggers), and this ${input.value.kind} is recorded`,
    ],
  };
}

/** One access to a mesh container, as recorded in an Event on the pod. */
export interface AccessRecord {
  readonly request: AccessRequest;
  /** What came of it: refused (enforce), admitted as a debugger, or admitted below enforce (would be refused). */
  readonly outcome: 'refused' | 'debugger' | 'admitted';
  readonly level: Level;
  /** The final verdict's reason code. */
  readonly reason: string;
}

/** The record of a CONNECT's final verdict (after its level), or undefined when it reached no mesh container. */
export function accessRecord(r: AdmissionRequest, v: Verdict, level: Level): AccessRecord | undefined {
  if (
    v.reason !== 'mesh_container_debug' &&
    v.reason !== 'mesh_container_access' &&
    v.reason !== 'access_container_unnamed'
  )
    return undefined;
  const input = accessInput(r);
  if (!input.ok) return undefined;
  const outcome = v.kind === 'deny' ? 'refused' : v.reason === 'mesh_container_debug' ? 'debugger' : 'admitted';
  return { request: input.value, outcome, level, reason: v.reason };
}

/** The Event's reason, type and sentence for a record (kubectl describe pod shows it). */
export function accessEvent(a: AccessRecord): { type: 'Normal' | 'Warning'; reason: string; message: string } {
  const r = a.request;
  const who = r.username ?? 'an unknown requester';
  const target = r.container ? `container ${r.container}` : 'the pod (no container named)';
  const command = describeCommand(r.command);
  const what = `${who}: kubectl ${r.kind} into ${target}${command ? `: ${command}` : ''}`;
  if (a.outcome === 'debugger')
    return {
      type: 'Normal',
      reason: 'MeshContainerDebug',
      message: `${what} (admitted: access.debuggers) [${a.reason}]`,
    };
  if (a.outcome === 'refused')
    return { type: 'Warning', reason: 'MeshContainerAccessRefused', message: `${what} (refused) [${a.reason}]` };
  return {
    type: 'Warning',
    reason: 'MeshContainerAccess',
    message: `${what} (admitted at level ${a.level}; refused at enforce) [${a.reason}]`,
  };
}
