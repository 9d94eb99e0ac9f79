/**
 * The structured termination message: what the kubelet copies into
 * `status.containerStatuses[].lastState.terminated.message`, so a controller (or `kubectl describe`) can read why the
 * pod was refused without the logs. Written best-effort: failing to write it never changes the exit code.
 */
import { writeFile } from 'node:fs/promises';
import type { ProbeScope } from './options.ts';
import type { ValidatorReason } from './reasons.ts';

export interface TerminationMessage {
  readonly reason: ValidatorReason;
  /** From --node-name or NODE_NAME (downward API spec.nodeName); null when neither is set. */
  readonly node: string | null;
  readonly probeAddress: string;
  /** `pod` (the default loopback probe), `external` (--external-probe) or `ambient` (--ambient). */
  readonly probeScope: ProbeScope | 'ambient';
  /** The probe's source address; null when the kernel chose it. */
  readonly sourceAddress: string | null;
  readonly outboundPort: number;
  /** null when no inbound listener was asked for. */
  readonly inboundPort: number | null;
  readonly elapsedMs: number;
  readonly detail: string;
}

/** The kubelet keeps at most 4096 bytes of the termination message; beyond that it truncates mid-JSON. */
export const TERMINATION_MESSAGE_MAX_BYTES = 4096;

/** Serializes to one JSON line that always fits the kubelet's limit, shortening `detail` if needed. */
export function formatTerminationMessage(msg: TerminationMessage): string {
  let text = JSON.stringify(msg);
  let detail = msg.detail;
  while (Buffer.byteLength(text) > TERMINATION_MESSAGE_MAX_BYTES && detail.length > 0) {
    const excess = Buffer.byteLength(text) - TERMINATION_MESSAGE_MAX_BYTES;
    // Cut at least the excess (JSON escaping can make a character count for several bytes) plus room for the marker.
    detail = detail.slice(0, Math.max(0, detail.length - excess - 16));
    text = JSON.stringify({ ...msg, detail: `${detail}…[truncated]` });
  }
  return text;
}

/** Writes the message; returns the error text instead of throwing, because the exit code must not depend on it. */
export async function writeTerminationLog(path: string, text: string): Promise<string | undefined> {
  try {
    await writeFile(path, text, 'utf8');
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
