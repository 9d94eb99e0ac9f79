/** A meshgate logger whose lines are kept and parsed, for tests that read what a daemon logs. */
import type { Logger } from 'pino';
import { createLogger, type LoggerSettings } from '../../src/log/logger.ts';

export type LogLine = Record<string, unknown> & { level: string; time: string; msg: string };

export function memoryLogger(settings: LoggerSettings = {}): { logger: Logger; lines: LogLine[]; raw: string[] } {
  const raw: string[] = [];
  const lines: LogLine[] = [];
  const logger = createLogger(settings, {
    write: (line: string) => {
      raw.push(line);
      lines.push(JSON.parse(line) as LogLine);
    },
  });
  return { logger, lines, raw };
}

/** An ISO 8601 UTC timestamp with milliseconds, as Date.toISOString writes it. */
export const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
