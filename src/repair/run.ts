/**
 * The repair controller assembled: a pod watch on every replica (warm cache, /readyz), a Lease-guarded leader that
 * alone acts (src/kube/lease.ts), a periodic resync while leading, and the HTTP endpoints. Further leader-only loops
 * (node quarantine) hang off `onStartedLeading`/`isLeader` the same way the pod repair does.
 */
import type { KubeClient } from '../kube/api/client.ts';
import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { MeshgateConfig } from '../config/types.ts';
import type { DeepReadonly } from '../util/readonly.ts';
import { compileConfig } from '../config/compile.ts';
import { LeaderElector, type ElectorOptions } from '../kube/lease.ts';
import { kubeLeaseStore } from '../kube/lease-store.ts';
import { RepairController } from './failed/controller.ts';
import { VALIDATION_FAILURES } from './failed/failures.ts';
import { buildRepairApp } from './http.ts';
import { kubeRepairApi, kubeReportApi } from './kube-api.ts';
import { PolicyReports } from './reports/reports.ts';
import { createRepairMetrics, type RepairMetrics } from './metrics.ts';
import { startQuarantine, type QuarantineSettings, type RunningQuarantine } from './quarantine/run.ts';
import { startUnmeshed, type RunningUnmeshed, type UnmeshedSettings } from './unmeshed/run.ts';
import { watchRepairPods } from './failed/watch.ts';
import { PodNotices } from './notices/notices.ts';
import { watchWouldDenyPods } from './notices/watch.ts';
import { MarkKeySource } from '../mark/key-source.ts';
import { CaptureRepair } from './capture/controller.ts';
import { kubeLevelOf } from './capture/level.ts';

export interface RepairRunOptions {
  kube: KubeClient;
  config: DeepReadonly<MeshgateConfig>;
  /** undefined: no leader election (a single replica acts alone). */
  lease?: { namespace: string; name: string } & Pick<
    ElectorOptions,
    'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'
  >;
  maxDeletesPerMinute: number;
  dryRun: boolean;
  /** The admission mark's keys (the mounted Secret, src/mark/keys.ts): only pods whose mark verifies are acted on. */
  markKeyDir: string;
  /** Withdraw a node's verification when validation failures cluster on it; undefined: never. */
  quarantine?: QuarantineSettings;
  /** Find (and evict, or report) pods of opted-in namespaces running without meshgate's redirect; undefined: no. */
  unmeshed?: UnmeshedSettings;
  /** Publish audit findings as PolicyReports (src/repair/reports/); default true. */
  policyReports?: boolean;
  /**
   * Istio ambient (config.ambient.enabled): guarded ambient pods that lose ztunnel's capture while running are
   * recorded and, at enforce, deleted (src/repair/capture/); the levels are read from this MutatingWebhookConfiguration.
   */
  capture?: { webhookConfig: string };
  /** Serve /healthz, /readyz, /metrics here; undefined: no HTTP. */
  listen?: { host: string; port: number };
  logger: Logger;
}

export interface RunningRepair {
  controller: RepairController;
  /** Guarded ambient pods that lost their capture (config.ambient.enabled and o.capture). */
  capture?: CaptureRepair;
  /** Events on pods meshgate holds Pending or admitted below enforce (src/repair/notices/notices.ts). */
  notices: PodNotices;
  /** The audit findings as PolicyReports; undefined when off. */
  reports?: PolicyReports;
  metrics: RepairMetrics;
  elector?: LeaderElector;
  quarantine?: RunningQuarantine;
  unmeshed?: RunningUnmeshed;
  app?: FastifyInstance;
  /** The HTTP port actually bound (0 in options picks a free one). */
  port?: number;
  stop(): Promise<void>;
}

/** Postponed deletions (the per-minute limit) and pods missed during a handover are retried this often. */
const RESYNC_MS = 30_000;

export async function startRepair(o: RepairRunOptions): Promise<RunningRepair> {
  const metrics = createRepairMetrics({ processMetrics: true });
  let elector: LeaderElector | undefined;
  const isLeader = () => elector?.isLeader() ?? true;
  const validator = { name: o.config.validator.name, failures: VALIDATION_FAILURES[o.config.mesh] };
  const cfg = compileConfig(o.config);
  // Before the pod watch, so its first list is judged with the keys; without one, nothing is acted on until it comes.
  const keys = new MarkKeySource({ dir: o.markKeyDir, log: o.logger });
  keys.start();
  const trust = {
    excludedNamespaces: [o.config.meshNamespace, ...o.config.systemNamespaces],
    keys: () => keys.ring(),
  };
  const deps = { isLeader, dryRun: o.dryRun, metrics, logger: o.logger };
  // Before the pod watch: its first list already reports failures to count.
  const quarantine = o.quarantine ? await startQuarantine(o.kube, cfg, validator, o.quarantine, deps) : undefined;
  const unmeshed = o.unmeshed ? await startUnmeshed(o.kube, cfg, o.unmeshed, { ...deps, keys: trust.keys }) : undefined;
  const controller = new RepairController(kubeRepairApi(o.kube), {
    validator,
    trust,
    maxDeletesPerMinute: o.maxDeletesPerMinute,
    dryRun: o.dryRun,
    isLeader,
    metrics,
    logger: o.logger,
    onFailure: quarantine && ((f) => void quarantine.quarantine.recordFailure(f)),
  });
  const capture =
    o.capture &&
    new CaptureRepair(kubeRepairApi(o.kube), {
      validatorName: o.config.validator.name,
      trust,
      levelOf: kubeLevelOf(o.kube, o.capture.webhookConfig),
      maxDeletesPerMinute: o.maxDeletesPerMinute,
      dryRun: o.dryRun,
      isLeader,
      metrics,
      logger: o.logger,
    });
  const notices = new PodNotices(kubeRepairApi(o.kube), {
    excludedNamespaces: trust.excludedNamespaces,
    isLeader,
    logger: o.logger,
  });
  const watch = await watchRepairPods(
    o.kube,
    {
      observe: async (p) => {
        unmeshed?.labelled.observe(p);
        await Promise.all([controller.observe(p), notices.observe(p), capture?.observe(p)]);
      },
      forget: (uid) => {
        controller.forget(uid);
        notices.forget(uid);
        capture?.forget(uid);
        unmeshed?.labelled.forget(uid);
      },
    },
    o.logger,
  );
  const reports =
    o.policyReports === false
      ? undefined
      : new PolicyReports(kubeReportApi(o.kube), {
          excludedNamespaces: trust.excludedNamespaces,
          isLeader,
          logger: o.logger,
          onWrite: (result) => metrics.policyReportWrites.inc({ result }),
        });
  const wouldDeny = await watchWouldDenyPods(o.kube, notices, o.logger, reports);
  if (o.lease) {
    elector = new LeaderElector(kubeLeaseStore(o.kube, o.lease.namespace, o.lease.name), {
      ...o.lease,
      log: o.logger,
      onStartedLeading: () => {
        metrics.leader.set(1);
        metrics.leaderTransitions.inc();
        void controller.resync();
        void notices.resync();
        void reports?.resync();
        void capture?.resync();
        void quarantine?.quarantine.tick();
        unmeshed?.sweep();
      },
      onStoppedLeading: () => metrics.leader.set(0),
    });
    elector.start();
  } else {
    metrics.leader.set(1);
    void reports?.resync();
    void quarantine?.quarantine.tick();
    unmeshed?.sweep();
  }
  const resync = setInterval(() => {
    void controller.resync();
    void capture?.resync();
  }, RESYNC_MS);
  let app: FastifyInstance | undefined;
  let port: number | undefined;
  if (o.listen) {
    // A loop that has not run for three lease durations is wedged (a sleep is at most retryPeriod, a renew bounded).
    const stale = o.lease ? 3 * o.lease.leaseDurationMs : Infinity;
    app = buildRepairApp({
      registry: metrics.registry,
      alive: () =>
        elector && Date.now() - elector.lastTick > stale
          ? { ok: false, why: 'leader election loop stalled' }
          : { ok: true },
      ready: () => {
        if (!watch.synced() || !wouldDeny.synced()) return { ok: false, why: 'pod cache not synced' };
        if (quarantine && !quarantine.synced()) return { ok: false, why: 'node cache not synced' };
        return keys.healthy();
      },
    });
    await app.listen({ host: o.listen.host, port: o.listen.port });
    const address = app.server.address();
    port = typeof address === 'object' && address ? address.port : o.listen.port;
  }
  return {
    controller,
    capture,
    notices,
    reports,
    metrics,
    elector,
    quarantine,
    unmeshed,
    app,
    port,
    async stop() {
      clearInterval(resync);
      // Step down and release first, so the other replica takes over while this one finishes.
      await elector?.stop();
      watch.stop();
      wouldDeny.stop();
      reports?.stop();
      keys.stop();
      quarantine?.stop();
      unmeshed?.stop();
      await app?.close();
    },
  };
}
