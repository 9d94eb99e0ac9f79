/**
 * `meshgate repair-controller [--kubeconfig FILE] [--config FILE] [--max-deletes-per-minute N] [--dry-run]`:
 * deletes meshgate pods whose redirect validation failed, so their controllers recreate them.
 */
import pino from 'pino';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from './args.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { loadKubeConfig } from '../kube/client.ts';
import { RepairController } from '../repair/controller.ts';
import { kubeRepairApi } from '../repair/kube-api.ts';
import { watchRepairPods } from '../repair/watch.ts';

const USAGE = 'usage: meshgate repair-controller [--kubeconfig FILE] [--config FILE] [--max-deletes-per-minute N (10)] [--dry-run]\n';

export async function run(argv: string[], io: CliIO): Promise<number> {
  let f;
  try {
    f = parseFlags(argv, {
      kubeconfig: { type: 'string' },
      config: { type: 'string' },
      'max-deletes-per-minute': { type: 'string', default: '10' },
      'dry-run': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    }).values;
    if (f.help) return io.stdout(USAGE), 0;
    if (!/^\d+$/.test(f['max-deletes-per-minute']!) || Number(f['max-deletes-per-minute']) < 1) {
      throw new UsageError(`--max-deletes-per-minute: "${f['max-deletes-per-minute']}" is not a positive integer`);
    }
  } catch (err) {
    io.stderr(`meshgate repair-controller: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  try {
    const config = loadConfig(f.config);
    const kc = loadKubeConfig({ kubeconfig: f.kubeconfig, inCluster: io.env.KUBERNETES_SERVICE_HOST !== undefined });
    if (!kc) throw new UsageError('no cluster credentials: pass --kubeconfig or run in a cluster');
    const logger = pino();
    const ctl = new RepairController(kubeRepairApi(kc), {
      validatorName: config.validator.name,
      maxDeletesPerMinute: Number(f['max-deletes-per-minute']),
      dryRun: f['dry-run']!,
      logger,
    });
    const stop = await watchRepairPods(kc, ctl, logger);
    await new Promise<void>((resolve) => {
      const done = () => (stop(), resolve());
      process.once('SIGTERM', done);
      process.once('SIGINT', done);
    });
    return 0;
  } catch (err) {
    io.stderr(`meshgate repair-controller: ${(err as Error).message}\n`);
    return err instanceof ConfigError || err instanceof UsageError ? 2 : 1;
  }
}
