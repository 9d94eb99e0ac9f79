// Values for the chart's production knobs, shared by test/chart/knobs.test.ts and test/e2e/chart-knobs.test.ts.
import type { Obj } from './helm.ts';

/** Extra args, env, volumes and mounts, as every workload accepts them. */
export const extras = {
  extraArgs: ['--log-level=debug'],
  extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=300' }],
  extraVolumes: [{ name: 'extra', emptyDir: {} }],
  extraVolumeMounts: [{ name: 'extra', mountPath: '/extra' }],
};

/** Every knob of this file at once (lint, and the e2e dry-run in test/e2e/chart-knobs.test.ts). */
export const ALL_KNOBS: Obj = {
  podLabels: { team: 'mesh' },
  podAnnotations: { 'example.com/owner': 'platform' },
  podSecurityContext: { runAsUser: null, runAsGroup: null },
  containerSecurityContext: { runAsUser: null, runAsGroup: null },
  webhook: {
    hostNetwork: true,
    port: 10260,
    podLabels: { tier: 'control' },
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
    ],
    ...extras,
  },
  nodeAgent: {
    port: 9478,
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
    podAnnotations: { a: 'b' },
    ...extras,
  },
  repairController: {
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' },
    ],
    ...extras,
  },
  networkPolicy: {
    enabled: true,
    apiServer: { cidrs: ['10.0.0.0/24'] },
    metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
  },
  metrics: { dashboard: { enabled: true } },
};
