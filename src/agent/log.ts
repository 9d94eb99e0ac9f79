/**
 * The node agent's log: one JSON object per line in the format of the daemons' pino logger (src/log/logger.ts):
 * `level` as a string, `time` in ISO 8601 UTC, the bound fields, the call's fields, `msg`; an `err` that is an Error
 * becomes {type, message, stack} as pino's serializer writes it, one already made fields (src/log/fields.ts) stays
 * as it is. So the agent's lines read like the webhook's and the repair controller's (docs/logs.md), the same key for
 * key (test/agent/log.test.ts writes each call through both). The agent writes a handful of lines per verdict
 * change; pino's import was 1.9 MiB of its RSS on every node (`npm run bench -- --footprint`).
 */
import type { AgentLog } from './agent.ts';

type Level = 'info' | 'warn' | 'error';

/** An Error as pino's standard serializer writes it (its type is the class' name). */
function serializeError(err: Error): Record<string, unknown> {
  return { type: err.constructor.name, message: err.message, stack: err.stack ?? '' };
}

export function jsonLineLog(bound: Record<string, unknown>, write: (line: string) => void): AgentLog {
  const at =
    (level: Level) =>
    (obj: object, msg: string): void => {
      const fields: Record<string, unknown> = { level, time: new Date().toISOString(), ...bound, ...obj, msg };
      if (fields.err instanceof Error) fields.err = serializeError(fields.err);
      write(`${JSON.stringify(fields)}\n`);
    };
  return { info: at('info'), warn: at('warn'), error: at('error') };
}
