// Values for the chart's production knobs, shared by test/chart/knobs.test.ts and test/e2e/chart-knobs.test.ts.
import type { Obj } from './helm.ts';

/** Extra args, env, volumes and mounts, as every workload accepts them. */
export const extras = {
  extraArgs: ['--log-level=debug'],
  extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=300' }],
  extraVolumes: [{ name: 'extra', emptyDir: {} }],
  extraVolumeMounts: [{ name: 'extra', mountPath: '/extra' }],
};

/** What users pass to every chart (test/chart/conventions.test.ts), all at once. */
export const CONVENTIONS: Obj = {
  commonLabels: { 'example.com/team': 'platform' },
  commonAnnotations: { 'example.com/owner': 'mesh-team' },
  imagePullSecrets: [{ name: 'regcred' }],
  webhook: {
    serviceAccount: { create: true, name: 'mg-webhook', annotations: { 'example.com/role': 'webhook' } },
    autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 4, targetMemoryUtilizationPercentage: 80 },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'mesh', effect: 'NoSchedule' }],
    nodeSelector: { 'kubernetes.io/os': 'linux' },
  },
  nodeAgent: {
    serviceAccount: { create: true, name: 'mg-agent', annotations: {} },
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] }],
        },
      },
    },
  },
  repairController: {
    serviceAccount: { create: true, name: 'mg-repair', annotations: {} },
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { 'app.kubernetes.io/component': 'repair-controller' } },
          },
        ],
      },
    },
  },
  uninstall: { serviceAccount: { create: true, name: 'mg-uninstall', annotations: {} }, timeout: '90s' },
  tests: { nodeSelector: { 'kubernetes.io/os': 'linux' } },
};

function deepMerge(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b))
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && a[k] && typeof a[k] === 'object' ? deepMerge(a[k], v) : v;
  return out;
}

/** Every knob of this file at once (lint, and the e2e dry-run in test/e2e/chart-knobs.test.ts). */
export const ALL_KNOBS: Obj = deepMerge(CONVENTIONS, {
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
});
