/**
 * `meshgate validate-redirect`: the unprivileged init container that proves outbound TCP is redirected to the proxy
 * before the proxy starts. Exit 0 when proven; otherwise exit VALIDATION_FAILED_EXIT_CODE (42) for every failure,
 * including bad arguments, with a JSON termination message naming the reason. See docs/validate-redirect.md.
 * This file is the edge: it alone reads argv and env and writes files; the check is validateRedirect.
 */
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from './args.ts';
import {
  DEFAULT_OUTBOUND_PORT,
  DEFAULT_PROBE_ADDRESS,
  DEFAULT_TERMINATION_LOG,
  DEFAULT_TIMEOUT_MS,
  defaultListenAddress,
  parseDuration,
  parseEndpoint,
  parsePort,
  trivialProbeProblem,
  type ValidateOptions,
} from '../validator/options.ts';
import { describeReason, VALIDATION_FAILED_EXIT_CODE, type Reason } from '../validator/reasons.ts';
import { formatTerminationMessage, writeTerminationLog } from '../validator/termination.ts';
import { formatEndpoint, validateRedirect } from '../validator/validate.ts';

const FLAGS = {
  'outbound-port': { type: 'string' },
  'probe-address': { type: 'string' },
  'listen-address': { type: 'string' },
  timeout: { type: 'string' },
  'termination-log': { type: 'string' },
  'node-name': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const USAGE = `usage: meshgate validate-redirect [flags]

Proves that outbound TCP from this pod is redirected to the proxy's outbound port. Exit 0 when proven,
${VALIDATION_FAILED_EXIT_CODE} on any failure (reason in the JSON termination message).

flags:
  --outbound-port PORT      proxy outbound port to listen on (default ${DEFAULT_OUTBOUND_PORT})
  --probe-address IP:PORT   address the probe connects to (default ${DEFAULT_PROBE_ADDRESS}, RFC 5737 TEST-NET-1)
  --listen-address IP       address to listen on (default 127.0.0.1, or ::1 for an IPv6 probe)
  --timeout DURATION        deadline for the whole check, e.g. 500ms, 5s (default ${DEFAULT_TIMEOUT_MS / 1000}s)
  --termination-log PATH    where to write the JSON termination message (default ${DEFAULT_TERMINATION_LOG})
  --node-name NAME          node name for the message (default: env NODE_NAME)
`;

interface Config {
  readonly options: ValidateOptions;
  readonly terminationLog: string;
  readonly node: string | null;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  try {
    return await validateFromArgs(argv, io);
  } catch (err) {
    // Bad arguments, or a bug: the pod is refused either way, with the documented code and a structured reason.
    const detail = err instanceof UsageError ? `invalid arguments: ${err.message}` : `unexpected error: ${(err as Error)?.stack ?? String(err)}`;
    const loose = looseFlags(argv, io.env);
    await fail(io, loose, { reason: 'internal_error', detail, probeAddress: loose.probeAddress, outboundPort: loose.outboundPort, elapsedMs: 0 });
    return VALIDATION_FAILED_EXIT_CODE;
  }
}

async function validateFromArgs(argv: string[], io: CliIO): Promise<number> {
  const config = parseConfig(argv, io.env);
  if (config === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  const { options } = config;
  const probeAddress = formatEndpoint(options.probe);
  const result = await validateRedirect(options);
  if (result.ok) {
    const where = config.node ? ` on node ${config.node}` : '';
    io.stdout(`meshgate validate-redirect: ok: outbound TCP to ${probeAddress} was redirected to ${result.listener}${where} (proof verified in ${result.elapsedMs}ms)\n`);
    return 0;
  }
  await fail(io, config, { reason: result.reason, detail: result.detail, probeAddress, outboundPort: options.outboundPort, elapsedMs: result.elapsedMs });
  return VALIDATION_FAILED_EXIT_CODE;
}

interface Failure {
  reason: Reason;
  detail: string;
  probeAddress: string;
  outboundPort: number;
  elapsedMs: number;
}

/** One human line on stderr, then the JSON termination message (best-effort: exit code unchanged if it fails). */
async function fail(io: CliIO, where: { terminationLog: string; node: string | null }, f: Failure): Promise<void> {
  const oneLine = f.detail.replace(/\s*\n\s*/g, ' | ');
  io.stderr(`meshgate validate-redirect: FAILED ${f.reason} (exit ${VALIDATION_FAILED_EXIT_CODE}): ${describeReason(f.reason)}: ${oneLine}\n`);
  const text = formatTerminationMessage({ reason: f.reason, node: where.node, probeAddress: f.probeAddress, outboundPort: f.outboundPort, elapsedMs: f.elapsedMs, detail: f.detail });
  const writeError = await writeTerminationLog(where.terminationLog, text);
  if (writeError) io.stderr(`meshgate validate-redirect: could not write the termination message: ${writeError}\n`);
}

function parseConfig(argv: string[], env: CliIO['env']): Config | 'help' {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) return 'help';
  const outboundPort = parsePort(values['outbound-port'] ?? String(DEFAULT_OUTBOUND_PORT));
  if (typeof outboundPort === 'string') throw new UsageError(`--outbound-port: ${outboundPort}`);
  if (outboundPort === 0) throw new UsageError('--outbound-port: must not be 0');
  const probe = parseEndpoint(values['probe-address'] ?? DEFAULT_PROBE_ADDRESS);
  if (typeof probe === 'string') throw new UsageError(`--probe-address: ${probe}`);
  const timeoutMs = values.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(values.timeout);
  if (typeof timeoutMs === 'string') throw new UsageError(`--timeout: ${timeoutMs}`);
  const listenAddress = values['listen-address'] ?? defaultListenAddress(probe.family);
  if (!isIP(listenAddress)) throw new UsageError(`--listen-address: "${listenAddress}" is not an IP address`);
  const options: ValidateOptions = Object.freeze({ outboundPort, probe: Object.freeze(probe), listenAddress, timeoutMs });
  const problem = trivialProbeProblem(options);
  if (problem) throw new UsageError(problem);
  return Object.freeze({ options, terminationLog: values['termination-log'] ?? DEFAULT_TERMINATION_LOG, node: nodeName(values['node-name'], env) });
}

/** Best-effort read of the flags a failure message needs, from argv that failed strict parsing. */
function looseFlags(argv: string[], env: CliIO['env']) {
  let values: Record<string, unknown> = {};
  try {
    values = parseArgs({ args: argv, options: FLAGS, strict: false, allowPositionals: true }).values;
  } catch {
    // Unparsable even loosely: fall back to defaults.
  }
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const port = parsePort(str('outbound-port') ?? String(DEFAULT_OUTBOUND_PORT));
  return {
    terminationLog: str('termination-log') ?? DEFAULT_TERMINATION_LOG,
    node: nodeName(str('node-name'), env),
    probeAddress: str('probe-address') ?? DEFAULT_PROBE_ADDRESS,
    outboundPort: typeof port === 'number' ? port : DEFAULT_OUTBOUND_PORT,
  };
}

function nodeName(flag: string | undefined, env: CliIO['env']): string | null {
  const name = flag ?? env.NODE_NAME;
  return name ? name : null;
}
