/**
 * The node agent's log: one JSON object per line in pino's format (`level` as pino's number, `time` in epoch ms, the
 * bound fields, the call's fields, `msg`), so the lines read like the webhook's and the repair controller's, which
 * log through pino. The agent writes a handful of lines per verdict change; pino's import was 1.9 MiB of its RSS on
 * every node (`npm run bench -- --footprint`). Errors are written as their message.
 */
import type { AgentLog } from './agent.ts';

const LEVELS = { info: 30, warn: 40, error: 50 } as const;

export function jsonLineLog(bound: Record<string, unknown>, write: (line: string) => void): AgentLog {
  const at =
    (level: keyof typeof LEVELS) =>
    (obj: object, msg: string): void => {
      const fields = { level: LEVELS[level], time: Date.now(), ...bound, ...obj, msg };
      write(`${JSON.stringify(fields, (_k, v) => (v instanceof Error ? v.message : v))}\n`);
    };
  return { info: at('info'), warn: at('warn'), error: at('error') };
}
