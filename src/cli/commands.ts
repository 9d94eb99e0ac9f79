/**
 * The one table of meshgate's commands and their flags, declared once: each command parses its flags with its entry
 * (`parseFlags(argv, COMMANDS.serve.flags)`: node:util parseArgs options, defaults included, so the values are typed
 * from the table), the dispatcher (main.ts) lists and loads commands from it, shell completion (completion.ts) is
 * generated from it, and test/cli/commands.test.ts holds every command's USAGE to it (each flag documented, each
 * default as the table has it). Each command's module (loaded by loaders.ts, which imports this table, not the other
 * way round) exports its entry, named for it (`checkCommand(argv, io): Promise<number>`, the exit code).
 */
import { DEFAULT_AMBIENT_POLL_MS, DEFAULT_AMBIENT_READYZ, DEFAULT_ZDS_SOCKET } from '../agent/ambient-facts.ts';
import { QUARANTINE_FLAGS } from '../repair/flags.ts';

/** What completion offers for a string flag's value: a file, a directory, or some words (default: free text). */
export type Completion = 'file' | 'dir' | readonly string[];

/** A node:util parseArgs option, with what completion offers for its value. */
export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  readonly default?: string | boolean;
  readonly complete?: Completion;
}

export interface CommandSpec {
  readonly summary: string;
  readonly flags: Readonly<Record<string, FlagSpec>>;
  /** Words the command takes as its first argument (completion's shells). */
  readonly positional?: readonly string[];
}

/** A flag of a command, as completion and the tests list them. */
export interface FlagView {
  name: string;
  short?: string;
  /** Absent for a boolean flag; 'text' for free text. */
  value?: 'text' | Completion;
  multiple?: boolean;
  default?: string | boolean;
}

const MESHES = ['istio', 'linkerd', 'custom'] as const;
const text = { type: 'string' } as const;
const file = { type: 'string', complete: 'file' } as const;
const dir = { type: 'string', complete: 'dir' } as const;
const flag = { type: 'boolean' } as const;
const HELP = { help: { type: 'boolean', short: 'h' } } as const;
const LOG_LEVEL = {
  'log-level': { type: 'string', default: 'info', complete: ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] },
} as const;
const MESH = { mesh: { type: 'string', complete: MESHES } } as const;
const OFFLINE = {
  filename: { type: 'string', short: 'f', complete: 'file' },
  config: file,
  ...MESH,
  'node-state': file,
  progress: flag,
} as const;
const NODE_CNI = {
  'plugin-type': { type: 'string', complete: ['istio-cni', 'linkerd-cni'] },
  'cni-conf-dir': { type: 'string', default: '/etc/cni/net.d', complete: 'dir' },
  'cni-bin-dir': { type: 'string', multiple: true, complete: 'dir' },
  runtime: { type: 'string', default: 'containerd', complete: ['containerd', 'crio'] },
  libcni: { type: 'string', default: 'auto', complete: ['auto', '1.1', '1.2', '1.3'] },
  'max-conf-num': { type: 'string', default: '1' },
  'multus-dir': { type: 'string', multiple: true, complete: 'dir' },
  'multus-path': { type: 'string', multiple: true },
} as const;

export const COMMANDS = {
  serve: {
    summary: 'run the admission webhook server (HTTPS)',
    flags: {
      port: { type: 'string', default: '8443' },
      host: { type: 'string', default: '0.0.0.0' },
      config: file,
      ...MESH,
      'cert-file': file,
      'key-file': file,
      'tls-san': { type: 'string', multiple: true },
      'write-certs': dir,
      'node-state': file,
      'cert-secret': text,
      'webhook-config': text,
      'mark-key-dir': dir,
      'mark-key-secret': text,
      kubeconfig: file,
      'drain-seconds': { type: 'string', default: '5' },
      'webhook-timeout-seconds': text,
      'max-connections': text,
      'max-connections-per-client': text,
      'max-inflight-reviews': text,
      'max-inflight-body-mib': text,
      ...LOG_LEVEL,
      ...HELP,
    },
  },
  check: {
    summary: 'check meshgate in a cluster: webhook, certificates, node verdicts, unmeshed pods (like linkerd check)',
    flags: {
      kubeconfig: file,
      context: text,
      namespace: { type: 'string', short: 'n' },
      config: file,
      ...MESH,
      name: text,
      'webhook-config': text,
      'node-agent': text,
      'tls-secret': text,
      output: { type: 'string', short: 'o', complete: ['table', 'json'] },
      audit: flag,
      pre: flag,
      ...HELP,
    },
  },
  inject: {
    summary: 'inject pod templates in YAML manifests (like istioctl kube-inject)',
    flags: { ...OFFLINE, ...HELP },
  },
  explain: {
    summary: 'explain, in words, what meshgate would do with each pod',
    flags: {
      ...OFFLINE,
      node: text,
      'mesh-config': file,
      namespace: { type: 'string', short: 'n' },
      kubeconfig: file,
      context: text,
      'meshgate-namespace': text,
      output: { type: 'string', short: 'o', complete: ['text', 'json', 'yaml'] },
      ...HELP,
    },
  },
  'check-node': {
    summary: 'show which CNI chain the runtime loads here and whether the mesh plugin is in it',
    flags: {
      ...NODE_CNI,
      'multus-network': text,
      output: { type: 'string', default: 'text', complete: ['text', 'json'] },
      ...HELP,
    },
  },
  'node-agent': {
    summary: 'verify this node’s CNI chain continuously and publish the verdict on the Node',
    flags: {
      config: file,
      ...MESH,
      ...NODE_CNI,
      'node-name': text,
      resync: { type: 'string', default: '5m' },
      debounce: { type: 'string', default: '100ms' },
      'taint-unverified': { type: 'boolean', default: false },
      'node-lease-namespace': text,
      kubeconfig: file,
      port: text,
      host: { type: 'string', default: '0.0.0.0' },
      'ambient-readyz': { type: 'string', default: DEFAULT_AMBIENT_READYZ },
      'ztunnel-socket': { type: 'string', default: DEFAULT_ZDS_SOCKET, complete: 'file' },
      'proc-net-unix': { type: 'string', default: '/proc/net/unix', complete: 'file' },
      'ambient-poll': { type: 'string', default: `${DEFAULT_AMBIENT_POLL_MS / 1000}s` },
      'proxy-guard': { type: 'boolean', default: false },
      'proxy-guard-interval': { type: 'string', default: '1s' },
      'proc-root': { type: 'string', default: '/proc', complete: 'file' },
      ...HELP,
    },
  },
  'validate-redirect': {
    summary: 'init container: prove outbound TCP is redirected to the proxy (exit 42 if not)',
    flags: {
      'outbound-port': text,
      'inbound-port': text,
      'probe-address': text,
      'external-probe': flag,
      'source-address': text,
      'listen-address': text,
      timeout: text,
      'termination-log': file,
      'node-name': text,
      ambient: flag,
      ...HELP,
    },
  },
  'repair-controller': {
    summary: 'delete pods whose redirect validation failed so they are recreated',
    flags: {
      kubeconfig: file,
      config: file,
      ...MESH,
      'mark-key-dir': dir,
      'max-deletes-per-minute': { type: 'string', default: '10' },
      'dry-run': { type: 'boolean', default: false },
      'leader-elect': { type: 'string', default: 'true', complete: ['true', 'false'] },
      'lease-name': { type: 'string', default: 'meshgate-repair-controller' },
      'lease-duration': { type: 'string', default: '15s' },
      'renew-deadline': { type: 'string', default: '10s' },
      'retry-period': { type: 'string', default: '2s' },
      port: text,
      host: { type: 'string', default: '0.0.0.0' },
      ...LOG_LEVEL,
      ...QUARANTINE_FLAGS,
      ...HELP,
    },
  },
  uninstall: {
    summary: 'remove what meshgate made at run time (Node keys, Secrets, Lease) once its chart is gone',
    flags: {
      kubeconfig: file,
      context: text,
      namespace: { type: 'string', short: 'n' },
      name: text,
      'mark-secret': text,
      timeout: text,
      'remove-enforcement-labels': flag,
      'dry-run': flag,
      ...HELP,
    },
  },
  version: {
    summary: 'print meshgate’s version, the Node.js version and the git commit it was built from',
    flags: { output: { type: 'string', short: 'o', complete: ['text', 'json'] }, ...HELP },
  },
  completion: {
    summary: 'print a shell completion script: bash, zsh or fish',
    flags: HELP,
    positional: ['bash', 'zsh', 'fish'],
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

/** A command's flags as a list, in the table's order: what completion offers and the tests check usage against. */
export function flagList(command: CommandName): FlagView[] {
  return Object.entries(COMMANDS[command].flags as CommandSpec['flags']).map(([name, f]) => ({
    name,
    ...(f.short ? { short: f.short } : {}),
    ...(f.type === 'string' ? { value: f.complete ?? 'text' } : {}),
    ...(f.multiple ? { multiple: true } : {}),
    ...(f.default !== undefined ? { default: f.default } : {}),
  }));
}
