/**
 * meshgate's command dispatcher. Each subcommand lives in its own file and exports
 * `run(argv: string[], io: CliIO): Promise<number>` returning the process exit code.
 * Only entry points (this file's callers and the subcommands' `run`) read argv/env.
 */
import type { CliIO } from './io.ts';
import { processIO } from './io.ts';

type Command = { summary: string; load: () => Promise<{ run: (argv: string[], io: CliIO) => Promise<number> }> };

const commands: Record<string, Command> = {
  serve: { summary: 'run the admission webhook server (HTTPS)', load: () => import('./serve.ts') },
  inject: { summary: 'inject pod templates in YAML manifests (like istioctl kube-inject)', load: () => import('./inject.ts') },
  explain: { summary: 'explain, in words, what meshgate would do with each pod', load: () => import('./explain.ts') },
  'check-node': { summary: 'show which CNI chain the runtime loads here and whether the mesh plugin is in it', load: () => import('./check-node.ts') },
  'node-agent': { summary: 'verify this node’s CNI chain continuously and publish the verdict on the Node', load: () => import('./node-agent.ts') },
  'validate-redirect': { summary: 'init container: prove outbound TCP is redirected to the proxy (exit 42 if not)', load: () => import('./validate-redirect.ts') },
  'repair-controller': { summary: 'delete pods whose redirect validation failed so they are recreated', load: () => import('./repair-controller.ts') },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: meshgate <command> [flags]\n\ncommands:\n${lines.join('\n')}\n\nRun 'meshgate <command> --help' for a command's flags.\n`;
}

export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    io.stderr(`meshgate: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const mod = await command.load();
  return mod.run(rest, io);
}
