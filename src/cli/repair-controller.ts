/**
 * `meshgate repair-controller`: deletes guarded pods whose redirect validation failed, so their controllers
 * recreate them; optionally withdraws nodes where such failures cluster (node quarantine) and evicts pods of
 * opted-in namespaces that run without meshgate's redirect. Several replicas elect one leader through a Lease; only
 * it acts. Flags are read here only (the quarantine's and the sweep's are declared in src/repair/flags.ts).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../log/logger.ts';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import { ConfigError, configFromFlags } from '../config/load.ts';
import { connectCluster } from '../kube/client.ts';
import { durationFlag } from '../agent/flags.ts';
import { startRepair } from '../repair/run.ts';
import {
  policyReportsSetting,
  QUARANTINE_USAGE,
  quarantineSettings,
  rewriteDeprecatedFlags,
  unmeshedSettings,
  webhookConfigName,
} from '../repair/flags.ts';
import { parsePort } from '../util/values.ts';
import { COMMANDS } from './commands.ts';

const USAGE =
  `usage: meshgate repair-controller (--config FILE | --mesh NAME) [flags]

Deletes pods whose validation container failed (meshgate's validator: exit 42; with mesh istio also Istio's
istio-validation: 126; with linkerd Linkerd's network validator: 95) so their controller recreates them. Only pods
whose admission mark (meshgate.io/admitted, set by meshgate's webhook) verifies with --mark-key-dir's keys count.

flags:
  --config FILE               meshgate configuration (its mesh key is required)
  --mesh NAME                 instead of --config: a mesh profile's defaults (istio | linkerd | custom)
  --mark-key-dir DIR          required: the admission mark's keys, the webhook's Secret mounted (files key, next,
                              previous), re-read every 10 s; not ready, and acting on no pod, while it holds none
  --kubeconfig FILE           cluster credentials (default: in-cluster service account)
  --max-deletes-per-minute N  rate limit (default 10)
  --dry-run                   record Events, delete nothing
  --leader-elect BOOL         elect one acting replica through a Lease (default true)
  --lease-name NAME           the Lease (default meshgate-repair-controller), in the config's meshNamespace
  --lease-duration DURATION   default 15s
  --renew-deadline DURATION   default 10s
  --retry-period DURATION     default 2s
  --port N                    serve /healthz, /readyz and /metrics over HTTP on N (default: not served)
  --host ADDR                 listen address for --port (default 0.0.0.0)
  --log-level LEVEL           pino level (default info)

${QUARANTINE_USAGE}
examples:
  meshgate repair-controller --config /etc/meshgate/config/config.yaml --port 9090 ` +
  `--mark-key-dir /etc/meshgate/admission-mark
  meshgate repair-controller --mesh istio --kubeconfig ~/.kube/config --mark-key-dir keys --dry-run ` +
  `--leader-elect false
  meshgate repair-controller --config config.yaml --mark-key-dir keys --withdraw-verdicts=true ` +
  `--unmeshed-pods=evict --webhook-config meshgate
`;

const FLAGS = COMMANDS['repair-controller'].flags;

export async function repairControllerCommand(argv: string[], io: CliIO): Promise<number> {
  let f: ReturnType<typeof parseFlags<typeof FLAGS>>['values'];
  let markKeyDir: string;
  let timing: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  try {
    const current = rewriteDeprecatedFlags(argv);
    for (const w of current.warnings) io.stderr(`meshgate repair-controller: ${w}\n`);
    f = parseFlags(current.argv, FLAGS).values;
    if (f.help) {
      io.stdout(USAGE);
      return 0;
    }
    const keyDir = f['mark-key-dir'];
    if (!keyDir)
      throw new UsageError(
        '--mark-key-dir is required: the repair controller acts only on pods whose admission mark verifies',
      );
    markKeyDir = keyDir;
    if (!/^\d+$/.test(f['max-deletes-per-minute']) || Number(f['max-deletes-per-minute']) < 1) {
      throw new UsageError(`--max-deletes-per-minute: "${f['max-deletes-per-minute']}" is not a positive integer`);
    }
    if (!['true', 'false'].includes(f['leader-elect']))
      throw new UsageError(`--leader-elect: "${f['leader-elect']}" is not true or false`);
    if (f.port !== undefined && f.port !== '0' && !parsePort(f.port).ok)
      throw new UsageError(`--port: "${f.port}" is not a port`);
    timing = {
      leaseDurationMs: durationFlag('--lease-duration', f['lease-duration']),
      renewDeadlineMs: durationFlag('--renew-deadline', f['renew-deadline']),
      retryPeriodMs: durationFlag('--retry-period', f['retry-period']),
    };
    if (!(timing.retryPeriodMs < timing.renewDeadlineMs && timing.renewDeadlineMs < timing.leaseDurationMs)) {
      throw new UsageError(
        '--retry-period < --renew-deadline < --lease-duration must hold: ' +
          'a leader must stop acting before another may take over',
      );
    }
  } catch (err) {
    io.stderr(`meshgate repair-controller: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  let running: Awaited<ReturnType<typeof startRepair>>;
  try {
    const config = configFromFlags({ config: f.config, mesh: f.mesh });
    const quarantine = quarantineSettings(f, config.meshNamespace);
    const unmeshed = unmeshedSettings(f);
    const policyReports = policyReportsSetting(f);
    const kube = await connectCluster({ kubeconfig: f.kubeconfig, env: io.env });
    if (!kube) throw new UsageError('no cluster credentials: pass --kubeconfig or run in a cluster');
    const logger = createLogger({ level: f['log-level'] });
    // POD_NAME (downward API) names the replica; the suffix tells a restarted process from its predecessor.
    const identity = `${io.env.POD_NAME ?? hostname()}_${randomUUID().slice(0, 8)}`;
    running = await startRepair({
      kube,
      config,
      lease:
        f['leader-elect'] === 'true'
          ? { namespace: config.meshNamespace, name: f['lease-name'], identity, ...timing }
          : undefined,
      maxDeletesPerMinute: Number(f['max-deletes-per-minute']),
      markKeyDir,
      dryRun: f['dry-run'],
      quarantine,
      unmeshed,
      policyReports,
      // Istio ambient: pods that lose ztunnel's capture while running (the levels from --webhook-config).
      capture: config.ambient.enabled ? { webhookConfig: webhookConfigName(f['webhook-config']) } : undefined,
      listen: f.port === undefined ? undefined : { host: f.host, port: Number(f.port) },
      logger,
    });
    logger.info(
      {
        identity,
        mesh: config.mesh,
        validator: config.validator.name,
        port: running.port,
        quarantine: quarantine !== undefined,
        unmeshed: unmeshed ? (unmeshed.evict ? 'evict' : 'report') : 'off',
        policyReports,
      },
      'repair controller started',
    );
  } catch (err) {
    io.stderr(`meshgate repair-controller: ${(err as Error).message}\n`);
    return err instanceof ConfigError || err instanceof UsageError ? 2 : 1;
  }
  await new Promise<void>((resolve) => {
    const done = () => {
      process.off('SIGTERM', done);
      process.off('SIGINT', done);
      resolve();
    };
    process.on('SIGTERM', done);
    process.on('SIGINT', done);
  });
  await running.stop();
  return 0;
}
