/**
 * The log format of meshgate's daemons, as pino writes it for serve and repair-controller (the node agent writes the
 * same lines without pino: src/agent/log.ts, held to this by test/agent/log.test.ts): levels as strings
 * (`"level":"info"`) and ISO 8601 UTC timestamps (`"time":"2026-11-26T10:00:00.000Z"`), what log pipelines (Loki,
 * Elasticsearch/ECS, Cloud Logging, Datadog) read without a parsing rule; pino's defaults (`"level":30`, epoch
 * milliseconds) need one. Errors go in an `err` object (fields.ts), never as JSON escaped into a string.
 *
 * The timestamp costs ~0.7–1.1 µs a line (Date#toISOString); the webhook writes one line per review, which costs
 * the server ~240 µs of CPU (docs/logs.md).
 */
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

const LOG_FORMAT = {
  formatters: { level: (label: string) => ({ level: label }) },
  timestamp: pino.stdTimeFunctions.isoTime,
  // An Error as pino writes it (type, message, stack); an `err` already made fields (fields.ts) as it is — pino's
  // own serializer would take it for an error and rewrite it as {"type":"Object","stack":""}.
  serializers: { err: (err: unknown) => (err instanceof Error ? pino.stdSerializers.err(err) : err) },
} as const satisfies LoggerOptions;

export interface LoggerSettings {
  /** pino level; default info. */
  level?: string;
  /** Fields on every line instead of pino's pid and hostname (the node agent's node name). */
  base?: Record<string, unknown>;
}

/** A logger in meshgate's format, to stdout unless given a destination (tests collect lines). */
export function createLogger(settings: LoggerSettings = {}, destination?: DestinationStream): Logger {
  const options: LoggerOptions = { ...LOG_FORMAT, level: settings.level ?? 'info' };
  if (settings.base) options.base = settings.base;
  return destination ? pino(options, destination) : pino(options);
}
