/**
 * `meshgate version` and `meshgate --version`: meshgate's version, the Node.js running it, and the git commit when
 * one was recorded (src/util/version.ts, which the daemons' meshgate_build_info reads too).
 */
import { parseFlags, UsageError } from '../util/args.ts';
import { COMMANDS } from './commands.ts';
import type { CliIO } from './io.ts';
import { type VersionInfo, versionInfo } from '../util/version.ts';

export const USAGE = `usage: meshgate version [-o text|json]

Prints meshgate's version, the Node.js version and the git commit it was built from (when recorded).
'meshgate --version' prints the same on one line.

flags:
  -o, --output FORMAT   text | json (default text)

examples:
  meshgate version
  meshgate version -o json | jq -r .commit
`;

/** `meshgate --version`: one line. */
export function versionLine(v: VersionInfo = versionInfo()): string {
  const commit = v.commit ? `commit ${v.commit.slice(0, 12)}, ` : '';
  return `meshgate ${v.version} (${commit}node ${v.node}, ${v.platform})\n`;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  let output: string | undefined;
  try {
    const { values } = parseFlags(argv, COMMANDS.version.flags);
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    output = values.output as string | undefined;
    if (output !== undefined && output !== 'text' && output !== 'json')
      throw new UsageError(`--output must be text or json, not "${output}"`);
  } catch (err) {
    io.stderr(`meshgate version: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const v = versionInfo();
  if (output === 'json') {
    io.stdout(`${JSON.stringify(v, null, 2)}\n`);
    return 0;
  }
  const commit = v.commit ? `${v.commit} (${v.commitSource})` : 'unknown (no build-info.json)';
  io.stdout(`meshgate ${v.version}\n  commit:   ${commit}\n  node:     ${v.node}\n  platform: ${v.platform}\n`);
  return 0;
}
