/**
 * meshgate's command dispatcher. The commands and their flags are one table (commands.ts); each subcommand lives
 * in its own file and exports its entry, named for it (`checkCommand(argv: string[], io: CliIO): Promise<number>`),
 * returning the process exit code. Only entry points (this file's callers and the commands' entries) read argv/env.
 */
import type { CliIO } from './io.ts';
import { processIO } from './io.ts';
import { COMMANDS, type CommandName } from './commands.ts';
import { LOADERS } from './loaders.ts';
import { versionLine } from './version.ts';

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: meshgate <command> [flags]

commands:
${lines.join('\n')}

Run 'meshgate <command> --help' (or 'meshgate help <command>') for a command's flags and examples;
'meshgate --version' for the version.

examples:
  meshgate check                                   # is meshgate healthy in the current kubectl context?
  meshgate explain --mesh istio -f deploy.yaml     # what would meshgate do with these pods, and why
  source <(meshgate completion bash)               # complete commands and flags in bash
`;
}

export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h') {
    (name ? io.stdout : io.stderr)(usage());
    return name ? 0 : 2;
  }
  if (name === '--version') {
    io.stdout(versionLine());
    return 0;
  }
  if (name === 'help') {
    if (rest.length === 0) {
      io.stdout(usage());
      return 0;
    }
    return main([rest[0], '--help'], io);
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    io.stderr(`meshgate: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const entry = await LOADERS[name as CommandName]();
  return entry(rest, io);
}

/**
 * The process entry of every form of the CLI (bin/meshgate.js, the single executable of scripts/release-cli.ts):
 * runs the command with this process's argv and streams and returns its exit code.
 *
 * A reader that stops early (`meshgate check-node | head -1`) closes the pipe: the next write fails with EPIPE.
 * That is the reader's choice, not an error of ours: drop further output quietly and finish with the command's
 * own exit code, as `cat` or `kubectl` would end without a trace. Any other stream error still surfaces.
 */
export function runProcess(argv: string[]): Promise<number> {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    });
  }
  return main(argv);
}
