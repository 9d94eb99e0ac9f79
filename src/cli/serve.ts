/**
 * `meshgate serve`: the admission webhook. Flags and env are read here and nowhere else. Without a kubeconfig
 * or in-cluster credentials it runs on the embedded default: node facts from `--node-state FILE`, else none.
 */
import pino from 'pino';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from './args.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { NodeStateError, loadNodeState } from '../facts/node-state.ts';
import { loadKubeConfig } from '../kube/client.ts';
import { startServer } from '../server/start.ts';
import { parsePort } from '../inject/values.ts';

const USAGE = `usage: meshgate serve [flags]
  --port N              HTTPS port (default 8443)
  --host ADDR           listen address (default 0.0.0.0)
  --config FILE         meshgate configuration (YAML/JSON); default: embedded defaults
  --cert-file FILE      serving certificate (PEM); with --key-file, watched and hot-reloaded
  --key-file FILE       serving key (PEM)
  --tls-san NAME        SAN for the self-signed certificate (repeatable; default localhost, 127.0.0.1,
                        meshgate.meshgate.svc)
  --write-certs DIR     write the generated CA (ca.crt) to DIR for curl and webhook registration
  --node-state FILE     node facts when running without a cluster (YAML/JSON: nodes: {name: {verified: true}})
  --cert-secret NAME    share self-managed certificates between replicas through this Secret in meshNamespace
  --webhook-config NAME keep the caBundle of the Mutating/ValidatingWebhookConfiguration NAME equal to our CA
  --kubeconfig FILE     cluster credentials (default: in-cluster service account when present)
  --drain-seconds N     seconds between readiness off and closing on SIGTERM (default 5)
  --log-level LEVEL     pino level (default info)
`;

export async function run(argv: string[], io: CliIO): Promise<number> {
  let f;
  try {
    f = parseFlags(argv, {
      port: { type: 'string', default: '8443' },
      host: { type: 'string', default: '0.0.0.0' },
      config: { type: 'string' },
      'cert-file': { type: 'string' },
      'key-file': { type: 'string' },
      'tls-san': { type: 'string', multiple: true },
      'write-certs': { type: 'string' },
      'node-state': { type: 'string' },
      kubeconfig: { type: 'string' },
      'cert-secret': { type: 'string' },
      'webhook-config': { type: 'string' },
      'drain-seconds': { type: 'string', default: '5' },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean', short: 'h' },
    }).values;
    if (f.help) return io.stdout(USAGE), 0;
    if (!!f['cert-file'] !== !!f['key-file']) throw new UsageError('--cert-file and --key-file go together');
    const port = parsePort(f.port!);
    if (!port.ok && f.port !== '0') throw new UsageError(`--port: ${port.error}`);
    if (!/^\d+(\.\d+)?$/.test(f['drain-seconds']!)) throw new UsageError(`--drain-seconds: "${f['drain-seconds']}" is not a number of seconds`);
  } catch (err) {
    io.stderr(`meshgate serve: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  let server;
  try {
    const config = loadConfig(f.config);
    const kc = loadKubeConfig({ kubeconfig: f.kubeconfig, inCluster: io.env.KUBERNETES_SERVICE_HOST !== undefined });
    if (!kc && (f['cert-secret'] || f['webhook-config'])) throw new UsageError('--cert-secret and --webhook-config need cluster credentials');
    if (kc && f['node-state']) io.stderr('meshgate serve: --node-state is ignored: node facts come from the cluster\n');
    server = await startServer({
      config,
      port: Number(f.port),
      host: f.host!,
      certFile: f['cert-file'],
      keyFile: f['key-file'],
      tlsSans: f['tls-san'] ?? ['localhost', '127.0.0.1', `meshgate.${config.meshNamespace}.svc`],
      writeCaTo: f['write-certs'],
      nodeState: kc ? undefined : loadNodeState(f['node-state']),
      kc,
      drainSeconds: Number(f['drain-seconds']),
      certSecret: f['cert-secret'] ? { namespace: config.meshNamespace, name: f['cert-secret'] } : undefined,
      webhookConfigName: f['webhook-config'],
      logger: pino({ level: f['log-level'] }),
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
