/** What the validating webhook's posture check says of a pod: admitted (with warnings) or refused, with a reason. */
import type { ReasonCode } from '../contract/reasons.ts';

export type PostureResult =
  | { ok: true; reason: ReasonCode; warnings: string[] }
  | { ok: false; reason: ReasonCode; message: string };
