/**
 * `meshgate serve`: the admission webhook. Flags and env are read here and nowhere else. Without a kubeconfig
 * or in-cluster credentials it runs on the embedded default: node facts from `--node-state FILE`, else none.
 */
import { createLogger } from '../log/logger.ts';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import { ConfigError, configFromFlags } from '../config/load.ts';
import { compileConfig } from '../config/compile.ts';
import { NodeStateError, loadNodeState } from '../facts/node-state.ts';
import { connectCluster } from '../kube/client.ts';
import { startServer } from '../server/start.ts';
import { parsePort } from '../util/values.ts';
import {
  BODY_LIMIT,
  DEFAULT_LIMITS,
  LimitsError,
  MAX_WEBHOOK_TIMEOUT_SECONDS,
  STALL_GRACE_MS,
  resolveLimits,
  type TransportLimits,
} from '../server/limits.ts';
import { COMMANDS } from './commands.ts';

const USAGE =
  `usage: meshgate serve [flags]
  --port N              HTTPS port (default 8443)
  --host ADDR           listen address (default 0.0.0.0)
  --config FILE         meshgate configuration (YAML/JSON); its mesh key is required
  --mesh NAME           instead of --config: a mesh profile's embedded defaults (istio | linkerd | custom)
  --cert-file FILE      serving certificate (PEM); with --key-file, watched and hot-reloaded
  --key-file FILE       serving key (PEM)
  --tls-san NAME        SAN for the self-signed certificate (repeatable; default localhost, 127.0.0.1,
                        meshgate.meshgate.svc)
  --write-certs DIR     write the generated CA (ca.crt) to DIR for curl and webhook registration
  --node-state FILE     node facts when running without a cluster (YAML/JSON: nodes: {name: {verified: true}})
  --cert-secret NAME    share self-managed certificates between replicas through this Secret in meshNamespace
  --webhook-config NAME keep the caBundle of the Mutating/ValidatingWebhookConfiguration NAME equal to our CA
  --mark-key-dir DIR    the admission mark's keys (files key, next, previous: a mounted Secret), re-read every
                        10 s; meshgate marks the pods it admits (meshgate.io/admitted) and is ready only with a
                        key (default: no mark, and a pod carrying one is refused)
  --mark-key-secret NAME
                        create this Secret in meshNamespace with a fresh random key when it does not exist (needs
                        --mark-key-dir, where it is mounted, and cluster credentials)
  --kubeconfig FILE     cluster credentials (default: in-cluster service account when present)
  --drain-seconds N     seconds between readiness off and closing on SIGTERM (default 5)
  --webhook-timeout-seconds N
                        the webhooks' timeoutSeconds (1-30): a request slower to arrive is answered 408, a
                        connection silent 5 s longer mid-request is cut (default ${MAX_WEBHOOK_TIMEOUT_SECONDS}, ` +
  `the apiserver's maximum)
  --max-connections N   open connections; at the cap a new one takes the slot of the oldest that never sent a
                        request, else it is closed at accept (default ${DEFAULT_LIMITS.maxConnections})
  --max-connections-per-client N
                        open connections from one address; more are closed at accept (default: a quarter of
                        --max-connections, ${DEFAULT_LIMITS.maxConnectionsPerClient})
  --max-inflight-reviews N
                        reviews decided or answered at once; more get 429 + Retry-After ` +
  `(default ${DEFAULT_LIMITS.maxInflightReviews})
  --max-inflight-body-mib N
                        MiB of request bodies held at once, at least 7 (default ` +
  `${DEFAULT_LIMITS.maxInflightBodyBytes / 1024 / 1024}: two 7 MiB bodies; each
                        parses to up to ~47 MiB of heap; raise it only with the memory limit)
  --log-level LEVEL     pino level (default info)

examples:
  meshgate serve --mesh istio --host 127.0.0.1 --node-state examples/node-state.yaml --write-certs certs
  meshgate serve --config /etc/meshgate/config/config.yaml --cert-secret meshgate-tls --webhook-config meshgate \\
    --mark-key-dir /etc/meshgate/admission-mark --mark-key-secret meshgate-admission-mark
`;

/** A whole number from flag `name` within [min, max], or undefined when it is not given. */
function count(f: Record<string, unknown>, name: string, min = 1, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = f[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(
      `--${name}: "${String(v)}" is not a whole number ` +
        `${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`}`,
    );
  }
  return Number(v);
}

/** The transport limits the flags set (server/limits.ts), checked here so a bad combination is a usage error. */
function transportLimits(f: Record<string, unknown>): Partial<TransportLimits> {
  const timeout = count(f, 'webhook-timeout-seconds', 1, MAX_WEBHOOK_TIMEOUT_SECONDS);
  // At least one largest body (7 MiB), or such a review could never be served.
  const bodyMib = count(f, 'max-inflight-body-mib', Math.ceil(BODY_LIMIT / 1024 / 1024));
  const limits: Partial<TransportLimits> = {
    // Headers come before the rest of the request, so their timeout is never longer than the request's.
    ...(timeout && {
      requestTimeoutMs: timeout * 1000,
      connectionTimeoutMs: timeout * 1000 + STALL_GRACE_MS,
      headersTimeoutMs: Math.min(DEFAULT_LIMITS.headersTimeoutMs, timeout * 1000),
    }),
    maxConnections: count(f, 'max-connections'),
    maxConnectionsPerClient: count(f, 'max-connections-per-client'),
    maxInflightReviews: count(f, 'max-inflight-reviews'),
    maxInflightBodyBytes: bodyMib && bodyMib * 1024 * 1024,
  };
  try {
    resolveLimits(limits);
  } catch (err) {
    if (err instanceof LimitsError) throw new UsageError(err.message);
    throw err;
  }
  return limits;
}

const FLAGS = COMMANDS.serve.flags;

export async function serveCommand(argv: string[], io: CliIO): Promise<number> {
  let f: ReturnType<typeof parseFlags<typeof FLAGS>>['values'];
  let limits: Partial<TransportLimits> = {};
  try {
    f = parseFlags(argv, FLAGS).values;
    if (f.help) {
      io.stdout(USAGE);
      return 0;
    }
    if (!!f['cert-file'] !== !!f['key-file']) throw new UsageError('--cert-file and --key-file go together');
    const port = parsePort(f.port);
    if (!port.ok && f.port !== '0') throw new UsageError(`--port: ${port.error}`);
    if (!/^\d+(\.\d+)?$/.test(f['drain-seconds']))
      throw new UsageError(`--drain-seconds: "${f['drain-seconds']}" is not a number of seconds`);
    limits = transportLimits(f);
    if (f['mark-key-secret'] && !f['mark-key-dir'])
      throw new UsageError('--mark-key-secret needs --mark-key-dir, the directory the Secret is mounted in');
    if (f['mark-key-secret'] !== undefined && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(f['mark-key-secret']))
      throw new UsageError(`--mark-key-secret: "${f['mark-key-secret']}" is not a Secret name`);
  } catch (err) {
    io.stderr(`meshgate serve: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    const config = compileConfig(configFromFlags({ config: f.config, mesh: f.mesh }));
    const kube = await connectCluster({ kubeconfig: f.kubeconfig, env: io.env });
    if (!kube && (f['cert-secret'] || f['webhook-config'] || f['mark-key-secret']))
      throw new UsageError('--cert-secret, --webhook-config and --mark-key-secret need cluster credentials');
    if (kube && f['node-state'])
      io.stderr('meshgate serve: --node-state is ignored: node facts come from the cluster\n');
    server = await startServer({
      config,
      port: Number(f.port),
      host: f.host,
      certFile: f['cert-file'],
      keyFile: f['key-file'],
      tlsSans: f['tls-san'] ?? ['localhost', '127.0.0.1', `meshgate.${config.config.meshNamespace}.svc`],
      writeCaTo: f['write-certs'],
      nodeState: kube ? undefined : loadNodeState(f['node-state']),
      kube,
      drainSeconds: Number(f['drain-seconds']),
      certSecret: f['cert-secret'] ? { namespace: config.config.meshNamespace, name: f['cert-secret'] } : undefined,
      webhookConfigName: f['webhook-config'],
      logger: createLogger({ level: f['log-level'] }),
      limits,
      markKeys: f['mark-key-dir']
        ? {
            dir: f['mark-key-dir'],
            createSecret: f['mark-key-secret']
              ? { namespace: config.config.meshNamespace, name: f['mark-key-secret'] }
              : undefined,
          }
        : undefined,
    });
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`meshgate serve: ${err.message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof NodeStateError) {
      io.stderr(`meshgate serve: ${err.message}\n`);
      return 1;
    }
    io.stderr(`meshgate serve: cannot start: ${(err as Error).message}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      void server.shutdown().then(resolve);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  return 0;
}
