/**
 * `meshgate validate-redirect --ambient`: the validator for Istio's ambient mode (src/validator/ambient.ts). Its own
 * small flag set, because none of the sidecar probe's listeners exist here: ztunnel must answer, not the validator.
 * Same contract as the sidecar probe: exit 0 when proven, otherwise exit 42 with a JSON termination message.
 * This file is the edge for the ambient mode: it alone reads argv, env and the pod's interfaces.
 */
import { networkInterfaces } from 'node:os';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import {
  AMBIENT_PROBE_ADDRESS,
  AMBIENT_RETRY_INTERVAL_MS,
  ambientProbeFor,
  ambientProbeProblem,
  DEFAULT_AMBIENT_TIMEOUT_MS,
  validateAmbient,
  ZTUNNEL_DNS_PORT,
  type AmbientOptions,
} from '../validator/ambient.ts';
import { formatHostPort } from '../validator/listener.ts';
import { DEFAULT_TERMINATION_LOG, parseEndpoint } from '../validator/options.ts';
import { parseDuration } from '../util/duration.ts';
import { describeReason, VALIDATION_FAILED_EXIT_CODE, type ValidatorReason } from '../validator/reasons.ts';
import { formatTerminationMessage, writeTerminationLog } from '../validator/termination.ts';
import { COMMANDS } from './commands.ts';

const FLAGS = COMMANDS['validate-redirect'].flags;
/** The flags that apply with --ambient: ztunnel answers, so the validator's listener and proxy ports do not. */
const AMBIENT_FLAGS: ReadonlySet<string> = new Set([
  'ambient',
  'probe-address',
  'timeout',
  'termination-log',
  'node-name',
  'help',
]);

export const AMBIENT_USAGE = `usage: meshgate validate-redirect --ambient [flags]

Proves that Istio's ambient in-pod rules capture this pod's TCP and that ztunnel serves the pod: a TCP handshake to
${AMBIENT_PROBE_ADDRESS} (redirected to ztunnel's DNS listener 127.0.0.1:${ZTUNNEL_DNS_PORT}; without the rules the address is
the pod's own and nothing leaves it), retried until the deadline. Exit 0 when proven, ${VALIDATION_FAILED_EXIT_CODE} on any failure.

flags:
  --probe-address IP:53     default ${AMBIENT_PROBE_ADDRESS}; an IPv6-only pod: its own IPv6 address, port 53
  --timeout DURATION        deadline for all attempts (default ${DEFAULT_AMBIENT_TIMEOUT_MS / 1000}s; one attempt every ${AMBIENT_RETRY_INTERVAL_MS}ms)
  --termination-log PATH    where to write the JSON termination message (default ${DEFAULT_TERMINATION_LOG})
  --node-name NAME          node name for the message (default: env NODE_NAME)
`;

/** The pod's own addresses, for the locality check of an explicit --probe-address. */
function localAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
}

export async function runAmbient(argv: string[], io: CliIO): Promise<number> {
  const log = looseValue(argv, '--termination-log') ?? DEFAULT_TERMINATION_LOG;
  const node = looseValue(argv, '--node-name') ?? (io.env.NODE_NAME || null);
  let probeAddress = looseValue(argv, '--probe-address') ?? AMBIENT_PROBE_ADDRESS;
  const failed = async (reason: ValidatorReason, detail: string, elapsedMs: number) => {
    io.stderr(
      `meshgate validate-redirect: FAILED ${reason} (exit ${VALIDATION_FAILED_EXIT_CODE}): ` +
        `${describeReason(reason)}: ${detail}\n`,
    );
    const text = formatTerminationMessage({
      reason,
      node,
      probeAddress,
      probeScope: 'ambient',
      sourceAddress: null,
      outboundPort: ZTUNNEL_DNS_PORT,
      inboundPort: null,
      elapsedMs,
      detail,
    });
    const writeError = await writeTerminationLog(log, text);
    if (writeError) io.stderr(`meshgate validate-redirect: could not write the termination message: ${writeError}\n`);
    return VALIDATION_FAILED_EXIT_CODE;
  };
  let opts: AmbientOptions;
  try {
    const { values } = parseFlags(argv, FLAGS);
    const other = Object.keys(values).find((k) => !AMBIENT_FLAGS.has(k));
    if (other) throw new UsageError(`Unknown option '--${other}'`);
    if (values.help) {
      io.stdout(AMBIENT_USAGE);
      return 0;
    }
    const probe =
      values['probe-address'] === undefined
        ? ambientProbeFor(networkInterfaces())
        : parseEndpoint(values['probe-address']);
    if (typeof probe === 'string') throw new UsageError(`--probe-address: ${probe}`);
    probeAddress = formatHostPort(probe.host, probe.port);
    const problem = ambientProbeProblem(probe, localAddresses());
    if (problem) throw new UsageError(problem);
    const timeoutMs = values.timeout === undefined ? DEFAULT_AMBIENT_TIMEOUT_MS : parseDuration(values.timeout);
    if (typeof timeoutMs === 'string') throw new UsageError(`--timeout: ${timeoutMs}`);
    opts = { probe, timeoutMs, retryIntervalMs: AMBIENT_RETRY_INTERVAL_MS };
  } catch (err) {
    const detail =
      err instanceof UsageError
        ? `invalid arguments: ${err.message}${err.message.startsWith('Unknown option') ? ' (with --ambient only --probe-address, --timeout, --termination-log and --node-name apply)' : ''}`
        : `unexpected error: ${(err as Error)?.stack ?? String(err)}`;
    return failed('internal_error', detail, 0);
  }
  const result = await validateAmbient(opts);
  if (!result.ok) return failed(result.reason, result.detail, result.elapsedMs);
  const where = node ? ` on node ${node}` : '';
  io.stdout(
    `meshgate validate-redirect: ok: TCP from ${result.client} to ${probeAddress} was captured by ztunnel ` +
      `(ambient in-pod redirection to 127.0.0.1:${ZTUNNEL_DNS_PORT})${where} ` +
      `(attempt ${result.attempts}, ${result.elapsedMs}ms)\n`,
  );
  return 0;
}

/** A flag's value read without strict parsing, so a failure message can still name the node and the log. */
function looseValue(argv: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === flag) return argv[i + 1];
    if (a.startsWith(`${flag}=`)) return a.slice(flag.length + 1);
  }
  return undefined;
}
