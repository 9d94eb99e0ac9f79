/**
 * Pathological but legal pods for part 2, each scalable by a factor so the cost can be shown to grow at most
 * linearly with the pod's size. Values look like real ones (image refs, downward-API env, resource maps), so
 * JSON sizes are representative per entry.
 */
type Obj = Record<string, unknown>;

function env(i: number, prefix: string): Obj {
  // Every tenth var comes from the downward API, as in generated Helm charts; the rest are literals.
  if (i % 10 === 0)
    return {
      name: `${prefix}_FIELD_${i}`,
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } },
    };
  return { name: `${prefix}_SETTING_${i}`, value: `value-${i}-${'x'.repeat(16)}` };
}

function container(name: string, envCount: number): Obj {
  return {
    name,
    image: `registry.example.com/team/${name}@sha256:${'0123456789abcdef'.repeat(4)}`,
    args: ['--listen=:8080', '--log-format=json'],
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: Array.from({ length: envCount }, (_, i) => env(i, name.toUpperCase().replace(/-/g, '_'))),
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
    readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 },
    volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

function pod(name: string, containers: Obj[], annotations: Record<string, string> = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      labels: { app: name, 'app.kubernetes.io/part-of': 'shop', 'pod-template-hash': '7d9c8b5f4' },
      annotations: { 'kubectl.kubernetes.io/default-container': 'app', ...annotations },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${name}-7d9c8b5f4`,
          uid: '2f0c6c1e-4a59-4a8e-9d7b-1f1e2c3d4e5f',
          controller: true,
        },
      ],
    },
    spec: {
      serviceAccountName: name,
      containers,
      volumes: [{ name: 'config', configMap: { name: `${name}-config` } }],
    },
  };
}

/** One container with 1,500 × scale env vars. */
export function manyEnvPod(scale = 1): Obj {
  return pod('many-env', [container('app', 1500 * scale)]);
}

/** 100 × scale containers, each with ten env vars. */
export function manyContainersPod(scale = 1): Obj {
  return pod(
    'many-containers',
    Array.from({ length: 100 * scale }, (_, i) => container(`c${i}`, 10)),
  );
}

/**
 * About 1 MiB × scale of JSON: half in annotations (a last-applied-configuration and tool annotations, the
 * usual way pods get big), half in env vars spread over four containers.
 */
export function oneMiBPod(scale = 1): Obj {
  const half = 512 * 1024 * scale;
  const annotations: Record<string, string> = {
    'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ blob: 'a'.repeat(half / 2) }),
  };
  for (let i = 0; annotationsBytes(annotations) < half; i++)
    annotations[`tools.example.com/note-${i}`] = `n${i}-${'b'.repeat(1000)}`;
  const perContainer = Math.round(half / 4 / 60); // ~60 bytes of JSON per literal env var
  return pod(
    'one-mib',
    [0, 1, 2, 3].map((i) => container(i === 0 ? 'app' : `helper-${i}`, perContainer)),
    annotations,
  );
}

function annotationsBytes(a: Record<string, string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(a)) n += k.length + v.length + 6;
  return n;
}

export const PATHOLOGICAL: Record<string, (scale?: number) => Obj> = {
  '1,500 env vars': manyEnvPod,
  '100 containers': manyContainersPod,
  '1 MiB pod': oneMiBPod,
};
