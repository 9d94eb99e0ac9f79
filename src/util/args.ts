/**
 * Tiny flag parser on top of node:util parseArgs: every subcommand declares its flags, unknown flags and
 * missing values are usage errors (exit 2) with a message naming the flag.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
