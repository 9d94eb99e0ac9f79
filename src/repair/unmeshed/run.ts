/**
 * The unmeshed-pod sweep assembled (src/repair/unmeshed/sweep.ts): a namespace watch on every replica, and — while
 * leading — a sweep every `sweepIntervalMs`, plus one shortly after a namespace's labels change (a namespace just
 * opted in is swept within about a second, not at the next period).
 */
import type { KubeClient } from '../../kube/api/client.ts';
import type { Logger } from 'pino';
import type { Compiled } from '../../config/compile.ts';
import type { RepairMetrics } from '../metrics.ts';
import { kubeUnmeshedApi, watchNamespaces } from './api.ts';
import { UnmeshedPods } from './sweep.ts';
import { LabelledUnmeshed } from './labelled.ts';
import type { KeyRing } from '../../mark/keys.ts';

export interface UnmeshedSettings {
  /** Evict (true) or only report (false). */
  evict: boolean;
  maxEvictionsPerMinute: number;
  sweepIntervalMs: number;
  /** meshgate's MutatingWebhookConfiguration, whose selectors say which namespaces are opted in. */
  webhookConfig: string;
}

/** Label changes come in bursts (kubectl label, a GitOps sync): one sweep for all of them. */
const CHANGE_DEBOUNCE_MS = 1_000;

export interface RunningUnmeshed {
  pods: UnmeshedPods;
  /** Fed the labelled pods by the repair controller's pod watch (src/repair/run.ts). */
  labelled: LabelledUnmeshed;
  /** Sweep now (on becoming leader). */
  sweep(): void;
  stop(): void;
}

export async function startUnmeshed(
  client: KubeClient,
  cfg: Compiled,
  s: UnmeshedSettings,
  deps: {
    isLeader: () => boolean;
    dryRun: boolean;
    metrics: RepairMetrics;
    logger: Logger;
    /** The admission mark's keys: a labelled pod whose mark verifies is not judged again (labelled.ts). */
    keys?: () => KeyRing | undefined;
  },
): Promise<RunningUnmeshed> {
  let namespaces: Awaited<ReturnType<typeof watchNamespaces>> | undefined;
  const labelled = new LabelledUnmeshed(cfg, deps.keys, (ns) => namespaces?.proxyIds(ns));
  const pods = new UnmeshedPods(
    kubeUnmeshedApi(client, s.webhookConfig, () => namespaces?.list() ?? []),
    {
      cfg,
      evict: s.evict,
      maxEvictionsPerMinute: s.maxEvictionsPerMinute,
      dryRun: deps.dryRun,
      isLeader: deps.isLeader,
      metrics: deps.metrics,
      logger: deps.logger,
      labelled,
    },
  );
  let running: Promise<unknown> | undefined;
  let again = false;
  const sweep = () => {
    if (running) {
      again = true;
      return;
    }
    running = pods.sweep().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        sweep();
      }
    });
  };
  let debounce: NodeJS.Timeout | undefined;
  namespaces = await watchNamespaces(
    client,
    () => {
      debounce ??= setTimeout(() => {
        debounce = undefined;
        sweep();
      }, CHANGE_DEBOUNCE_MS);
    },
    deps.logger,
  );
  const timer = setInterval(sweep, s.sweepIntervalMs);
  return {
    pods,
    labelled,
    sweep,
    stop() {
      clearInterval(timer);
      clearTimeout(debounce);
      namespaces?.stop();
      pods.stop();
    },
  };
}
