/**
 * The node quarantine assembled (src/repair/quarantine/quarantine.ts): a watch of unverified Nodes on every replica, the
 * failures from the pod watch counted on every replica, and — while leading — a tick that walks every withdrawn
 * node through hold, agent verdict, probe and give-back.
 */
import type { KubeClient } from '../../kube/api/client.ts';
import type { Logger } from 'pino';
import type { Compiled } from '../../config/compile.ts';
import type { ValidatorWatch } from '../failed/decide.ts';
import type { HoldOffOptions } from '../failed/hold-off.ts';
import type { RepairMetrics } from '../metrics.ts';
import { watchWithdrawnNodes } from './node-watch.ts';
import { probeTemplate } from './probe-pod.ts';
import { NodeQuarantine } from './quarantine.ts';
import { kubeQuarantineApi } from './api.ts';

export interface QuarantineSettings {
  threshold: number;
  windowMs: number;
  holdOff: HoldOffOptions;
  taint: boolean;
  /** How often the leader re-judges withdrawn nodes (default 10 s). */
  intervalMs: number;
  probe: { namespace: string; validatorImage?: string; proxyImage?: string; timeoutMs: number };
}

export interface RunningQuarantine {
  quarantine: NodeQuarantine;
  synced(): boolean;
  stop(): void;
}

export async function startQuarantine(
  client: KubeClient,
  cfg: Compiled,
  validator: ValidatorWatch,
  s: QuarantineSettings,
  deps: { isLeader: () => boolean; dryRun: boolean; metrics: RepairMetrics; logger: Logger },
): Promise<RunningQuarantine> {
  const template = probeTemplate(cfg, {
    namespace: s.probe.namespace,
    validatorImage: s.probe.validatorImage,
    proxyImage: s.probe.proxyImage,
    activeDeadlineSeconds: Math.ceil(s.probe.timeoutMs / 1000),
  });
  const quarantine = new NodeQuarantine(kubeQuarantineApi(client, template, validator), {
    threshold: s.threshold,
    windowMs: s.windowMs,
    holdOff: s.holdOff,
    taint: s.taint,
    probeTimeoutMs: s.probe.timeoutMs,
    dryRun: deps.dryRun,
    isLeader: deps.isLeader,
    metrics: deps.metrics,
    logger: deps.logger,
  });
  const watch = await watchWithdrawnNodes(client, quarantine, deps.logger);
  const timer = setInterval(() => void quarantine.tick(), s.intervalMs);
  return {
    quarantine,
    synced: watch.synced,
    stop() {
      clearInterval(timer);
      watch.stop();
    },
  };
}
