/**
 * The one table of meshgate's commands and their flags: the dispatcher (main.ts) lists and loads commands from it,
 * shell completion (completion.ts) is generated from it, `check`, `version` and `completion` parse their flags
 * from it, and test/cli/commands.test.ts holds every other command's USAGE and parser to it, so none can drift.
 * Each command's module (loaded by loaders.ts, which imports this table, not the other way round) exports
 * `run(argv, io): Promise<number>` (the exit code).
 */
import type { ParseArgsConfig } from 'node:util';
import { QUARANTINE_FLAGS, UNMESHED_MODES } from '../repair/flags.ts';

/** What a flag's value is, for completion: a file, a directory, one of some words, or free text. */
export type FlagValue = 'file' | 'dir' | 'text' | readonly string[];

export interface FlagSpec {
  name: string;
  short?: string;
  /** Absent for a boolean flag. */
  value?: FlagValue;
  multiple?: boolean;
}

export interface CommandSpec {
  summary: string;
  flags: readonly FlagSpec[];
  /** Words the command takes as its first argument (completion's shells). */
  positional?: readonly string[];
}

const MESHES = ['istio', 'linkerd', 'custom'] as const;
const HELP: FlagSpec = { name: 'help', short: 'h' };
const LOG_LEVEL: FlagSpec = { name: 'log-level', value: ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] };
const OFFLINE: readonly FlagSpec[] = [
  { name: 'filename', short: 'f', value: 'file' },
  { name: 'config', value: 'file' },
  { name: 'mesh', value: MESHES },
  { name: 'node-state', value: 'file' },
  { name: 'progress' },
];
const NODE_CNI: readonly FlagSpec[] = [
  { name: 'plugin-type', value: ['istio-cni', 'linkerd-cni'] },
  { name: 'cni-conf-dir', value: 'dir' },
  { name: 'cni-bin-dir', value: 'dir', multiple: true },
  { name: 'runtime', value: ['containerd', 'crio'] },
  { name: 'libcni', value: ['auto', '1.1', '1.2', '1.3'] },
  { name: 'max-conf-num', value: 'text' },
  { name: 'multus-dir', value: 'dir', multiple: true },
  { name: 'multus-path', value: 'text', multiple: true },
];

/** The table's names stay literal (CommandName) while every entry is checked as a CommandSpec. */
const table = <K extends string>(t: Record<K, CommandSpec>): Readonly<Record<K, CommandSpec>> => t;

export const COMMANDS = table({
  serve: {
    summary: 'run the admission webhook server (HTTPS)',
    flags: [
      { name: 'port', value: 'text' },
      { name: 'host', value: 'text' },
      { name: 'config', value: 'file' },
      { name: 'mesh', value: MESHES },
      { name: 'cert-file', value: 'file' },
      { name: 'key-file', value: 'file' },
      { name: 'tls-san', value: 'text', multiple: true },
      { name: 'write-certs', value: 'dir' },
      { name: 'node-state', value: 'file' },
      { name: 'cert-secret', value: 'text' },
      { name: 'webhook-config', value: 'text' },
      { name: 'mark-key-dir', value: 'dir' },
      { name: 'mark-key-secret', value: 'text' },
      { name: 'kubeconfig', value: 'file' },
      { name: 'drain-seconds', value: 'text' },
      { name: 'webhook-timeout-seconds', value: 'text' },
      { name: 'max-connections', value: 'text' },
      { name: 'max-inflight-reviews', value: 'text' },
      { name: 'max-inflight-body-mib', value: 'text' },
      LOG_LEVEL,
      HELP,
    ],
  },
  check: {
    summary: 'check meshgate in a cluster: webhook, certificates, node verdicts, unmeshed pods (like linkerd check)',
    flags: [
      { name: 'kubeconfig', value: 'file' },
      { name: 'context', value: 'text' },
      { name: 'namespace', short: 'n', value: 'text' },
      { name: 'config', value: 'file' },
      { name: 'mesh', value: MESHES },
      { name: 'name', value: 'text' },
      { name: 'webhook-config', value: 'text' },
      { name: 'node-agent', value: 'text' },
      { name: 'tls-secret', value: 'text' },
      { name: 'output', short: 'o', value: ['table', 'json'] },
      { name: 'audit' },
      { name: 'pre' },
      HELP,
    ],
  },
  inject: {
    summary: 'inject pod templates in YAML manifests (like istioctl kube-inject)',
    flags: [...OFFLINE, HELP],
  },
  explain: {
    summary: 'explain, in words, what meshgate would do with each pod',
    flags: [
      ...OFFLINE,
      { name: 'node', value: 'text' },
      { name: 'namespace', short: 'n', value: 'text' },
      { name: 'kubeconfig', value: 'file' },
      { name: 'context', value: 'text' },
      { name: 'meshgate-namespace', value: 'text' },
      { name: 'output', short: 'o', value: ['text', 'json', 'yaml'] },
      HELP,
    ],
  },
  'check-node': {
    summary: 'show which CNI chain the runtime loads here and whether the mesh plugin is in it',
    flags: [...NODE_CNI, { name: 'multus-network', value: 'text' }, { name: 'output', value: ['text', 'json'] }, HELP],
  },
  'node-agent': {
    summary: 'verify this node’s CNI chain continuously and publish the verdict on the Node',
    flags: [
      { name: 'config', value: 'file' },
      { name: 'mesh', value: MESHES },
      ...NODE_CNI,
      { name: 'node-name', value: 'text' },
      { name: 'resync', value: 'text' },
      { name: 'debounce', value: 'text' },
      { name: 'taint-unverified' },
      { name: 'kubeconfig', value: 'file' },
      { name: 'port', value: 'text' },
      { name: 'host', value: 'text' },
      { name: 'ambient-readyz', value: 'text' },
      { name: 'ztunnel-socket', value: 'file' },
      { name: 'proc-net-unix', value: 'file' },
      { name: 'ambient-poll', value: 'text' },
      HELP,
    ],
  },
  'validate-redirect': {
    summary: 'init container: prove outbound TCP is redirected to the proxy (exit 42 if not)',
    flags: [
      { name: 'outbound-port', value: 'text' },
      { name: 'inbound-port', value: 'text' },
      { name: 'probe-address', value: 'text' },
      { name: 'external-probe' },
      { name: 'source-address', value: 'text' },
      { name: 'listen-address', value: 'text' },
      { name: 'timeout', value: 'text' },
      { name: 'termination-log', value: 'file' },
      { name: 'node-name', value: 'text' },
      HELP,
    ],
  },
  'repair-controller': {
    summary: 'delete pods whose redirect validation failed so they are recreated',
    flags: [
      { name: 'kubeconfig', value: 'file' },
      { name: 'config', value: 'file' },
      { name: 'mesh', value: MESHES },
      { name: 'mark-key-dir', value: 'dir' },
      { name: 'max-deletes-per-minute', value: 'text' },
      { name: 'dry-run' },
      { name: 'leader-elect', value: ['true', 'false'] },
      { name: 'lease-name', value: 'text' },
      { name: 'lease-duration', value: 'text' },
      { name: 'renew-deadline', value: 'text' },
      { name: 'retry-period', value: 'text' },
      { name: 'port', value: 'text' },
      { name: 'host', value: 'text' },
      LOG_LEVEL,
      ...Object.entries(QUARANTINE_FLAGS).map(
        ([name, spec]): FlagSpec => ({
          name,
          value:
            name === 'unmeshed-pods'
              ? UNMESHED_MODES
              : 'default' in spec && spec.default === 'false'
                ? ['true', 'false']
                : 'text',
        }),
      ),
      HELP,
    ],
  },
  uninstall: {
    summary: 'remove what meshgate made at run time (Node keys, Secrets, Lease) once its chart is gone',
    flags: [
      { name: 'kubeconfig', value: 'file' },
      { name: 'context', value: 'text' },
      { name: 'namespace', short: 'n', value: 'text' },
      { name: 'name', value: 'text' },
      { name: 'mark-secret', value: 'text' },
      { name: 'timeout', value: 'text' },
      { name: 'dry-run' },
      HELP,
    ],
  },
  version: {
    summary: 'print meshgate’s version, the Node.js version and the git commit it was built from',
    flags: [{ name: 'output', short: 'o', value: ['text', 'json'] }, HELP],
  },
  completion: {
    summary: 'print a shell completion script: bash, zsh or fish',
    flags: [HELP],
    positional: ['bash', 'zsh', 'fish'],
  },
});

export type CommandName = keyof typeof COMMANDS;

/** node:util parseArgs options for a command of the table (strict: an unknown flag is a usage error). */
export function parseOptions(command: CommandName): NonNullable<ParseArgsConfig['options']> {
  const out: NonNullable<ParseArgsConfig['options']> = {};
  for (const f of COMMANDS[command].flags) {
    out[f.name] = {
      type: f.value ? 'string' : 'boolean',
      ...(f.short ? { short: f.short } : {}),
      ...(f.multiple ? { multiple: true } : {}),
    };
  }
  return out;
}
