/**
 * Each command's module, loaded only when that command runs (so `meshgate validate-redirect` never loads the
 * Kubernetes client). Apart from the table (commands.ts) so the commands, which parse their flags from the table,
 * and the table never import each other in a circle. Typed by the table's names: a command without a loader, or a
 * loader without a command, does not compile.
 */
import type { CommandName } from './commands.ts';
import type { CliIO } from './io.ts';

export type Command = { run: (argv: string[], io: CliIO) => Promise<number> };

export const LOADERS: Readonly<Record<CommandName, () => Promise<Command>>> = {
  serve: () => import('./serve.ts'),
  check: () => import('./check.ts'),
  inject: () => import('./inject.ts'),
  explain: () => import('./explain.ts'),
  'check-node': () => import('./check-node.ts'),
  'node-agent': () => import('./node-agent.ts'),
  'validate-redirect': () => import('./validate-redirect.ts'),
  'repair-controller': () => import('./repair-controller.ts'),
  uninstall: () => import('./uninstall.ts'),
  version: () => import('./version.ts'),
  completion: () => import('./completion.ts'),
};
