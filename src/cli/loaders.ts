/**
 * Each command's module, loaded only when that command runs (so `meshgate validate-redirect` never loads the
 * Kubernetes client). Apart from the table (commands.ts) so the commands, which parse their flags from the table,
 * and the table never import each other in a circle. Typed by the table's names: a command without a loader, or a
 * loader without a command, does not compile. Each module's entry is named for its command (`checkCommand`), so an
 * import says which command it runs.
 */
import type { CommandName } from './commands.ts';
import type { CliIO } from './io.ts';

/** A command's entry: its arguments after the command's name in, the process exit code out. */
export type CommandEntry = (argv: string[], io: CliIO) => Promise<number>;

export const LOADERS: Readonly<Record<CommandName, () => Promise<CommandEntry>>> = {
  serve: async () => (await import('./serve.ts')).serveCommand,
  check: async () => (await import('./check.ts')).checkCommand,
  inject: async () => (await import('./inject.ts')).injectCommand,
  explain: async () => (await import('./explain.ts')).explainCommand,
  'check-node': async () => (await import('./check-node.ts')).checkNodeCommand,
  'node-agent': async () => (await import('./node-agent.ts')).nodeAgentCommand,
  'validate-redirect': async () => (await import('./validate-redirect.ts')).validateRedirectCommand,
  'repair-controller': async () => (await import('./repair-controller.ts')).repairControllerCommand,
  uninstall: async () => (await import('./uninstall.ts')).uninstallCommand,
  version: async () => (await import('./version.ts')).versionCommand,
  completion: async () => (await import('./completion.ts')).completionCommand,
};
