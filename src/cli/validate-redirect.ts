/**
 * `meshgate validate-redirect`: the unprivileged init container that proves the pod's TCP is redirected to the proxy
 * before the proxy starts. Exit 0 when proven; otherwise exit VALIDATION_FAILED_EXIT_CODE (42) for every failure,
 * including bad arguments, with a JSON termination message naming the reason. See docs/validate-redirect.md.
 * This file is the edge: it alone reads argv and env and writes files; the check is validateRedirect.
 */
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import { optionsProblem } from '../validator/checks.ts';
import {
  DEFAULT_EXTERNAL_PROBE_ADDRESS,
  DEFAULT_INBOUND_PORT,
  DEFAULT_OUTBOUND_PORT,
  DEFAULT_PROBE_ADDRESS,
  DEFAULT_PROBE_ADDRESS_IPV6,
  DEFAULT_TERMINATION_LOG,
  DEFAULT_TIMEOUT_MS,
  defaultListenAddress,
  defaultSourceAddress,
  EXTERNAL_SYN_WINDOW_MS,
  parseEndpoint,
  parseProbePort,
  type ProbeScope,
  type ValidateOptions,
} from '../validator/options.ts';
import { parseDuration } from '../util/duration.ts';
import { describeReason, VALIDATION_FAILED_EXIT_CODE, type ValidatorReason } from '../validator/reasons.ts';
import { formatTerminationMessage, writeTerminationLog, type TerminationMessage } from '../validator/termination.ts';
import { formatEndpoint, validateRedirect } from '../validator/validate.ts';
import { runAmbient } from './validate-ambient.ts';
import { COMMANDS } from './commands.ts';

const FLAGS = COMMANDS['validate-redirect'].flags;

/**
 * `--inbound-port none`: listen on the outbound port only (Linkerd's rules never send anything to its inbound
 * port).
 */
const NO_PORT = 'none';

const USAGE =
  `usage: meshgate validate-redirect [flags]

Proves that this pod's TCP is redirected to the proxy. Exit 0 when proven, ${VALIDATION_FAILED_EXIT_CODE} on any failure
(reason in the JSON termination message). Run it as the proxy's UID/GID for Istio's rules.

flags:
  --outbound-port PORT      proxy outbound port to listen on (default ${DEFAULT_OUTBOUND_PORT})
  --inbound-port PORT|none  proxy inbound capture port to listen on too (default ${DEFAULT_INBOUND_PORT})
  --probe-address IP:PORT   address the probe connects to (default ${DEFAULT_PROBE_ADDRESS}; ` +
  `IPv6 ${DEFAULT_PROBE_ADDRESS_IPV6});
                            must be an address of the pod, so an unredirected probe stays inside it
  --external-probe          the probe address is outside the pod (meshes that never redirect loopback, e.g.
                            Linkerd); default ${DEFAULT_EXTERNAL_PROBE_ADDRESS}, ` +
  `one SYN leaves the pod if not redirected
  --source-address IP       the probe's source (default 127.0.0.1, ::1 for IPv6; the kernel's choice with
                            --external-probe)
  --listen-address IP       address to listen on (default 127.0.0.1, or ::1 for an IPv6 probe)
  --timeout DURATION        deadline for the whole check, e.g. 500ms, 5s (default ${DEFAULT_TIMEOUT_MS / 1000}s; ` +
  `an external
                            probe's handshake gets at most ${EXTERNAL_SYN_WINDOW_MS}ms)
  --termination-log PATH    where to write the JSON termination message (default ${DEFAULT_TERMINATION_LOG})
  --ambient                 Istio ambient: prove ztunnel captures the pod's traffic instead (its own flags:
                            meshgate validate-redirect --ambient --help)
  --node-name NAME          node name for the message (default: env NODE_NAME)

examples:
  meshgate validate-redirect --probe-address 127.0.0.6:15002 --timeout 5s                  # Istio's rules
  meshgate validate-redirect --external-probe --outbound-port 4140 --inbound-port none     # Linkerd's rules
  meshgate validate-redirect --ambient                                                     # Istio ambient (ztunnel)
`;

interface Config {
  readonly options: ValidateOptions;
  readonly terminationLog: string;
  readonly node: string | null;
}

/** The termination message's description of what was probed: from the options, or from loosely read flags. */
type ProbeFields = Pick<
  TerminationMessage,
  'probeAddress' | 'probeScope' | 'sourceAddress' | 'outboundPort' | 'inboundPort'
>;

export async function validateRedirectCommand(argv: string[], io: CliIO): Promise<number> {
  // Istio ambient: ztunnel answers, not the validator's listeners; its own flags (src/cli/validate-ambient.ts).
  if (argv.includes('--ambient')) return runAmbient(argv, io);
  try {
    return await validateFromArgs(argv, io);
  } catch (err) {
    // Bad arguments, or a bug: the pod is refused either way, with the documented code and a structured reason.
    const detail =
      err instanceof UsageError
        ? `invalid arguments: ${err.message}`
        : `unexpected error: ${(err as Error)?.stack ?? String(err)}`;
    const loose = looseFlags(argv, io.env);
    await fail(io, loose, loose.fields, { reason: 'internal_error', detail, elapsedMs: 0 });
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
  const fields = probeFields(options);
  const result = await validateRedirect(options);
  if (result.ok) {
    const where = config.node ? ` on node ${config.node}` : '';
    io.stdout(
      `meshgate validate-redirect: ok: TCP from ${result.client} to ${fields.probeAddress} ` +
        `was redirected to ${result.listener} ` +
        `(the ${result.role} capture port)${where} (proof verified in ${result.elapsedMs}ms)\n`,
    );
    return 0;
  }
  await fail(io, config, fields, { reason: result.reason, detail: result.detail, elapsedMs: result.elapsedMs });
  return VALIDATION_FAILED_EXIT_CODE;
}

/** One human line on stderr, then the JSON termination message (best-effort: exit code unchanged if it fails). */
async function fail(
  io: CliIO,
  where: { terminationLog: string; node: string | null },
  fields: ProbeFields,
  f: { reason: ValidatorReason; detail: string; elapsedMs: number },
): Promise<void> {
  const oneLine = f.detail.replace(/\s*\n\s*/g, ' | ');
  io.stderr(
    `meshgate validate-redirect: FAILED ${f.reason} (exit ${VALIDATION_FAILED_EXIT_CODE}): ` +
      `${describeReason(f.reason)}: ${oneLine}\n`,
  );
  const text = formatTerminationMessage({
    reason: f.reason,
    node: where.node,
    ...fields,
    elapsedMs: f.elapsedMs,
    detail: f.detail,
  });
  const writeError = await writeTerminationLog(where.terminationLog, text);
  if (writeError) io.stderr(`meshgate validate-redirect: could not write the termination message: ${writeError}\n`);
}

function probeFields(o: ValidateOptions): ProbeFields {
  return {
    probeAddress: formatEndpoint(o.probe),
    probeScope: o.scope,
    sourceAddress: o.sourceAddress,
    outboundPort: o.outboundPort,
    inboundPort: o.inboundPort,
  };
}

function parseConfig(argv: string[], env: CliIO['env']): Config | 'help' {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) return 'help';
  const outboundPort = parseProbePort(values['outbound-port'] ?? String(DEFAULT_OUTBOUND_PORT));
  if (typeof outboundPort === 'string') throw new UsageError(`--outbound-port: ${outboundPort}`);
  if (outboundPort === 0) throw new UsageError('--outbound-port: must not be 0');
  const inboundPort = parseInboundPort(values['inbound-port']);
  if (typeof inboundPort === 'string') throw new UsageError(`--inbound-port: ${inboundPort}`);
  const scope: ProbeScope = values['external-probe'] ? 'external' : 'pod';
  const probe = parseEndpoint(values['probe-address'] ?? defaultProbe(scope));
  if (typeof probe === 'string') throw new UsageError(`--probe-address: ${probe}`);
  const timeoutMs = values.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(values.timeout);
  if (typeof timeoutMs === 'string') throw new UsageError(`--timeout: ${timeoutMs}`);
  const listenAddress = values['listen-address'] ?? defaultListenAddress(probe.family);
  if (!isIP(listenAddress)) throw new UsageError(`--listen-address: "${listenAddress}" is not an IP address`);
  const sourceAddress = values['source-address'] ?? defaultSourceAddress(probe.family, scope);
  if (sourceAddress !== null && !isIP(sourceAddress))
    throw new UsageError(`--source-address: "${sourceAddress}" is not an IP address`);
  const options: ValidateOptions = Object.freeze({
    outboundPort,
    inboundPort,
    probe: Object.freeze(probe),
    scope,
    sourceAddress,
    listenAddress,
    timeoutMs,
  });
  const problem = optionsProblem(options);
  if (problem) throw new UsageError(problem);
  return Object.freeze({
    options,
    terminationLog: values['termination-log'] ?? DEFAULT_TERMINATION_LOG,
    node: nodeName(values['node-name'], env),
  });
}

function parseInboundPort(text: string | undefined): number | null | string {
  if (text === NO_PORT) return null;
  const port = parseProbePort(text ?? String(DEFAULT_INBOUND_PORT));
  if (port === 0) return `must not be 0 (use "${NO_PORT}" for no inbound listener)`;
  return port;
}

function defaultProbe(scope: ProbeScope): string {
  return scope === 'pod' ? DEFAULT_PROBE_ADDRESS : DEFAULT_EXTERNAL_PROBE_ADDRESS;
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
  const outbound = parseProbePort(str('outbound-port') ?? String(DEFAULT_OUTBOUND_PORT));
  const inbound = parseInboundPort(str('inbound-port'));
  const probeScope: ProbeScope = values['external-probe'] === true ? 'external' : 'pod';
  const probeAddress = str('probe-address') ?? defaultProbe(probeScope);
  const probe = parseEndpoint(probeAddress);
  const fields: ProbeFields = {
    probeAddress,
    probeScope,
    sourceAddress:
      str('source-address') ?? (typeof probe === 'string' ? null : defaultSourceAddress(probe.family, probeScope)),
    outboundPort: typeof outbound === 'number' ? outbound : DEFAULT_OUTBOUND_PORT,
    inboundPort: typeof inbound === 'string' ? DEFAULT_INBOUND_PORT : inbound,
  };
  return {
    terminationLog: str('termination-log') ?? DEFAULT_TERMINATION_LOG,
    node: nodeName(str('node-name'), env),
    fields,
  };
}

function nodeName(flag: string | undefined, env: CliIO['env']): string | null {
  const name = flag ?? env.NODE_NAME;
  return name ? name : null;
}
