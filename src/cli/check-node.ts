/**
 * `meshgate check-node`: one verification of this machine's CNI chain, the same one the node agent publishes,
 * for a person (which file the runtime will load and why, the chain in order, the verdict, what to do) or as
 * JSON (the ChainVerdict type). Exit 0 when verified, 1 when not, 2 on usage errors, when the conf dir cannot be read, or
 * on any unexpected error: 1 is a verdict ("not verified"), so a failure of meshgate itself must never look like
 * one; it is reported in one line, without a stack trace.
 */
import { multusDirs, multusPaths, parseCount, parseLibcni, parseRuntimeOrVersion, splitDirs } from '../agent/flags.ts';
import { chooseLine, judgeByLine, type LineChoice } from '../cni/libcni-line.ts';
import { cniAdviceFor } from '../cni/reasons.ts';
import { readSnapshot } from '../cni/snapshot.ts';
import type { Candidate, LibcniLine, LineEvidence, Snapshot, ChainVerdict, VerifyOptions } from '../cni/types.ts';
import { verifyChain } from '../cni/verify.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import type { CliIO } from './io.ts';
import { COMMANDS } from './commands.ts';
import { NETWORK_NAME } from '../util/names.ts';

const USAGE = `usage: meshgate check-node --plugin-type TYPE [flags]

Shows which CNI configuration the container runtime will load on this machine and whether its chain runs the
mesh plugin after the interface plugin. Exit 0 when verified, 1 when not, 2 on usage or I/O errors.

flags:
  --plugin-type TYPE     mesh CNI plugin type that must be chained, e.g. istio-cni, linkerd-cni (required)
  --cni-conf-dir DIR     CNI configuration dir (default /etc/cni/net.d)
  --cni-bin-dir DIR      CNI plugin dir, repeatable or comma-separated (default /opt/cni/bin)
  --runtime RUNTIME      containerd | crio, or the Node's containerRuntimeVersion (containerd://2.1.4,
                         cri-o://1.31.2), whose version tells which libcni line reads the files (default containerd)
  --libcni LINE          1.1 | 1.2 | 1.3, or auto: from --runtime's version; when that is not given or not a known
                         release, verified only when every line agrees (default auto)
  --max-conf-num N       containerd's max_conf_num (default 1; 0 = all files)
  --multus-dir DIR       a dir Multus reads besides the conf dir (its confDir, the dir of its clusterNetwork file);
                         repeatable or comma-separated
  --multus-path FROM=TO  Multus' configuration says FROM where this machine has TO (thick plugin: its daemon's
                         container paths); repeatable (default /host/etc/cni/net.d=<--cni-conf-dir>)
  --multus-network NS/NAME  the OpenShift model: the mesh plugin runs as this Multus additional network
                         (config cni.multusNetwork, e.g. default/istio-cni), looked up in Multus' confDir
  --output FORMAT        text | json (default text)

examples:
  meshgate check-node --plugin-type istio-cni --runtime "$(kubectl get node "$(hostname)" \
      -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')"
  meshgate check-node --plugin-type linkerd-cni --runtime crio --cni-conf-dir /host/etc/cni/net.d --output json
`;

const FLAGS = COMMANDS['check-node'].flags;

export async function checkNodeCommand(argv: string[], io: CliIO): Promise<number> {
  try {
    return await check(argv, io);
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    io.stderr(`meshgate check-node: internal error: ${message.split('\n')[0]}\n`);
    return 2;
  }
}

async function check(argv: string[], io: CliIO): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv);
  } catch (err) {
    io.stderr(`meshgate check-node: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  const { confDir, binDirs, extraDirs, output, options, choice } = parsed;
  const snapshot = await readSnapshot(confDir, binDirs, extraDirs);
  const verdict = judgeByLine(choice, (libcni) => verifyChain(snapshot, { ...options, libcni }));
  io.stdout(output === 'json' ? `${JSON.stringify(verdict, null, 2)}\n` : render(snapshot, verdict, options));
  if (snapshot.dirError) {
    io.stderr(`meshgate check-node: cannot read ${confDir}: ${snapshot.dirError}\n`);
    return 2;
  }
  return verdict.verified ? 0 : 1;
}

function parseArgs(argv: string[]) {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) return 'help' as const;
  const pluginType = values['plugin-type'];
  if (!pluginType) throw new UsageError('--plugin-type is required (e.g. istio-cni, linkerd-cni)');
  if (values.output !== 'text' && values.output !== 'json') throw new UsageError('--output must be text or json');
  const { runtime, runtimeVersion } = parseRuntimeOrVersion(values.runtime);
  const network = values['multus-network'];
  if (network !== undefined && !NETWORK_NAME.test(network))
    throw new UsageError(`--multus-network must be namespace/name of a NetworkAttachmentDefinition, got "${network}"`);
  const confDir = values['cni-conf-dir'];
  const options: Omit<VerifyOptions, 'libcni'> = {
    pluginType,
    runtime,
    maxConfNum: parseCount('--max-conf-num', values['max-conf-num']),
    multus: { paths: multusPaths(values['multus-path'], confDir), ...(network ? { network } : {}) },
  };
  const choice: LineChoice = chooseLine(runtime, parseLibcni(values.libcni), runtimeVersion);
  const binDirs = splitDirs(values['cni-bin-dir']);
  const extraDirs = multusDirs(values['multus-dir']);
  return { confDir, binDirs, extraDirs, output: values.output, options, choice };
}

const OUTCOME_WORDS: Record<Candidate['outcome'], string> = {
  selected: 'LOADED  the pod’s default network',
  loaded: 'loaded  additional network',
  unreadable: 'unreadable',
  unparsable: 'does not parse',
  binary_missing: 'skipped: plugin binary missing',
  binary_not_executable: 'skipped: plugin binary not executable',
  not_considered: 'not considered',
};

/** The verdict for a person, top to bottom in the order the runtime decides. */
export function render(snapshot: Snapshot, verdict: ChainVerdict, options: Omit<VerifyOptions, 'libcni'>): string {
  const { evidence } = verdict;
  const runtime = options.runtime === 'containerd' ? `containerd (max_conf_num ${options.maxConfNum})` : 'CRI-O';
  const from = evidence.runtimeVersion ? ` (${evidence.runtimeVersion})` : '';
  const binDirs = (snapshot.binDirs ?? []).map((d) =>
    snapshot.binDirErrors?.[d] ? `${d} (${snapshot.binDirErrors[d]})` : d,
  );
  const lines = [
    `Runtime:    ${runtime}`,
    evidence.libcni === 'all'
      ? `libcni:     every line (1.1, 1.2, 1.3): the runtime's is not known${from}`
      : `libcni:     ${evidence.libcni}${from}`,
    `Conf dir:   ${snapshot.confDir}${snapshot.dirMissing ? '  (does not exist)' : ''}` +
      `${snapshot.dirError ? `  (${snapshot.dirError})` : ''}`,
    `Bin dirs:   ${binDirs.join(', ')}`,
    `Mesh plugin: ${options.pluginType}`,
    '',
  ];
  if (evidence.lines) {
    lines.push('What each libcni line loads:');
    for (const [line, e] of Object.entries(evidence.lines) as Array<[LibcniLine, LineEvidence]>) {
      const chain = e.plugins.length > 0 ? `: ${e.plugins.join(' → ')}` : '';
      lines.push(`  ${line}  ${e.reason}${e.file ? ` (${e.file}${chain})` : ''}`);
    }
    lines.push('');
  }
  if (evidence.candidates.length > 0) {
    lines.push(`Files, in the order the runtime tries them${evidence.lines ? ' (libcni 1.1)' : ''}:`);
    const width = Math.max(...evidence.candidates.map((c) => c.file.length));
    for (const c of evidence.candidates) {
      const mark = c.outcome === 'selected' ? '*' : ' ';
      lines.push(`  ${mark} ${c.file.padEnd(width)}  ${OUTCOME_WORDS[c.outcome]}${c.detail ? ` (${c.detail})` : ''}`);
    }
    lines.push('');
  }
  const mark = (list: string[]) => list.map((p) => (p === options.pluginType ? `[${p}]` : p)).join(' → ');
  const { multus } = evidence;
  if (evidence.file && (evidence.plugins.length > 0 || multus)) {
    lines.push(`Loaded file: ${evidence.file}${evidence.sha256 ? `  sha256 ${evidence.sha256}` : ''}`);
    if (multus) {
      const from = multus.by === 'delegates' ? 'delegates[0]' : `clusterNetwork ${JSON.stringify(multus.network)}`;
      lines.push(
        `Multus:      ${multus.type} runs the pod's network from ${from}${multus.file ? ` → ${multus.file}` : ''}`,
      );
    }
    if (evidence.plugins.length > 0) lines.push(`Chain:       ${mark(evidence.plugins)}`);
    if (multus?.additional) {
      const { network, file, plugins } = multus.additional;
      lines.push(`Additional:  ${network}${file ? ` (${file})` : ''}: ${mark(plugins)}`);
    }
    lines.push('');
  }
  if (evidence.renamed) lines.push(`Renamed by Cilium: ${evidence.renamed.join(', ')}`, '');
  lines.push(`Verdict:     ${verdict.verified ? 'VERIFIED' : 'NOT VERIFIED'} (${verdict.reason})`);
  lines.push(`             ${verdict.message}`);
  lines.push(`What to do:  ${cniAdviceFor(verdict.reason, multus)}`);
  return `${lines.join('\n')}\n`;
}
