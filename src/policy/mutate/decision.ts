/** What the mutating webhook decides for a pod: skip it, refuse it, or patch it (with what it records). */
import type { PatchOp } from '../../contract/patch.ts';
import type { ReasonCode } from '../../contract/reasons.ts';
import type { RedirectDecision } from '../redirect.ts';
import type { InjectionStatus } from '../status.ts';

export type Decision =
  | { kind: 'skip'; reason: ReasonCode }
  | { kind: 'deny'; reason: ReasonCode; message: string; redirect?: RedirectDecision }
  | {
      kind: 'patch';
      reason: ReasonCode;
      ops: PatchOp[];
      status: InjectionStatus;
      redirect: RedirectDecision;
      warnings: string[];
    };
