/**
 * The istio-proxy container and the volumes of Istio 1.27's `sidecar` template (see istio-template.ts), in the
 * template's order.
 */
import { type Json, asList, obj, sprint, truthy } from './types.ts';
import {
  annotation,
  at,
  interceptionMode,
  metadataEnv,
  resourcesDefine,
  statusPort,
  type TemplateData,
  yamlScalar,
} from './istio-template.ts';

const fieldRef = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
/** The divisor Go writes for an unset Quantity. */
const resourceRef = (name: string, resource: string) => ({
  name,
  valueFrom: { resourceFieldRef: { resource, divisor: '0' } },
});

/** DefaultProxyConfig's values, which template.go cleanProxyConfig leaves out of PROXY_CONFIG ("makes the pod smaller"). */
const PROXY_CONFIG_DEFAULTS: Readonly<Json> = {
  configPath: './etc/istio/proxy',
  binaryPath: '/usr/local/bin/envoy',
  controlPlaneAuthPolicy: 'MUTUAL_TLS',
  serviceCluster: 'istio-proxy',
  drainDuration: '45s',
  terminationDrainDuration: '5s',
  discoveryAddress: 'istiod.istio-system.svc:15012',
  proxyAdminPort: 15000,
  statNameLength: 189,
  statusPort: 15020,
};

function cleanProxyConfig(pc: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(pc)) {
    if (JSON.stringify(PROXY_CONFIG_DEFAULTS[k]) === JSON.stringify(v)) continue;
    if (k === 'proxyMetadata' && Object.keys(obj(v)).length === 0) continue;
    out[k] = v;
  }
  return out;
}

function proxyEnv(d: TemplateData): Json[] {
  const g = obj(d.values.global);
  const rev = sprint(d.values.revision ?? '');
  const trustDomain = d.mesh.trustDomain ?? g.trustDomain ?? 'cluster.local';
  const env: Json[] = [];
  if (sprint(at(d.mesh, 'inboundTrafficPolicy', 'mode')).toUpperCase() === 'LOCALHOST')
    env.push({ name: 'REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION', value: 'true' });
  env.push(
    { name: 'PILOT_CERT_PROVIDER', value: sprint(g.pilotCertProvider) },
    {
      name: 'CA_ADDR',
      value: truthy(g.caAddress)
        ? sprint(g.caAddress)
        : `istiod${rev !== '' && rev !== '<nil>' ? `-${rev}` : ''}.${sprint(g.istioNamespace)}.svc:15012`,
    },
    fieldRef('POD_NAME', 'metadata.name'),
    fieldRef('POD_NAMESPACE', 'metadata.namespace'),
    fieldRef('INSTANCE_IP', 'status.podIP'),
    fieldRef('SERVICE_ACCOUNT', 'spec.serviceAccountName'),
    fieldRef('HOST_IP', 'status.hostIP'),
    resourceRef('ISTIO_CPU_LIMIT', 'limits.cpu'),
    { name: 'PROXY_CONFIG', value: `${JSON.stringify(cleanProxyConfig(d.proxyConfig))}\n` },
    { name: 'ISTIO_META_POD_PORTS', value: `[\n${d.podPorts.map((p) => JSON.stringify(p)).join('\n,')}\n]` },
    { name: 'ISTIO_META_APP_CONTAINERS', value: d.appContainers.join(',') },
    resourceRef('GOMEMLIMIT', 'limits.memory'),
    resourceRef('GOMAXPROCS', 'limits.cpu'),
    {
      name: 'ISTIO_META_CLUSTER_ID',
      value: truthy(at(g, 'multiCluster', 'clusterName')) ? sprint(at(g, 'multiCluster', 'clusterName')) : 'Kubernetes',
    },
    fieldRef('ISTIO_META_NODE_NAME', 'spec.nodeName'),
    {
      name: 'ISTIO_META_INTERCEPTION_MODE',
      value: d.ann['sidecar.istio.io/interceptionMode'] || sprint(d.proxyConfig.interceptionMode ?? 'REDIRECT'),
    },
  );
  if (truthy(g.network)) env.push({ name: 'ISTIO_META_NETWORK', value: sprint(g.network) });
  const workload = d.labels['service.istio.io/workload-name'] || d.owner?.name;
  if (workload) env.push({ name: 'ISTIO_META_WORKLOAD_NAME', value: workload });
  if (d.owner)
    env.push({
      name: 'ISTIO_META_OWNER',
      value: `kubernetes://apis/${d.owner.apiVersion}/namespaces/${d.owner.namespace || 'default'}/${d.owner.kind.toLowerCase()}s/${d.owner.name}`,
    });
  if (Object.hasOwn(d.ann, 'sidecar.istio.io/bootstrapOverride'))
    env.push({ name: 'ISTIO_BOOTSTRAP_OVERRIDE', value: '/etc/istio/custom-bootstrap/custom_bootstrap.json' });
  if (truthy(g.meshID)) env.push({ name: 'ISTIO_META_MESH_ID', value: sprint(g.meshID) });
  else if (truthy(trustDomain)) env.push({ name: 'ISTIO_META_MESH_ID', value: sprint(trustDomain) });
  if (truthy(trustDomain)) env.push({ name: 'TRUST_DOMAIN', value: sprint(trustDomain) });
  if (sprint(at(g, 'proxy', 'tracer')) === 'datadog' && Object.hasOwn(d.ann, 'apm.datadoghq.com/env')) {
    try {
      const dd = obj(JSON.parse(d.ann['apm.datadoghq.com/env']));
      for (const k of Object.keys(dd).sort()) env.push({ name: k, value: sprint(dd[k]) });
    } catch {
      // The template's fromJSON yields "{}" for text that is not JSON: nothing to range over.
    }
  }
  return [...env, ...metadataEnv(d)];
}

function securityContext(d: TemplateData): Json {
  const p = obj(at(d.values, 'global', 'proxy'));
  if (sprint(obj(d.proxyConfig.proxyMetadata).IPTABLES_TRACE_LOGGING) === 'true')
    return {
      allowPrivilegeEscalation: true,
      capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
      privileged: true,
      readOnlyRootFilesystem: true,
      runAsGroup: 1337,
      runAsNonRoot: false,
      runAsUser: 0,
    };
  const tproxy = interceptionMode(d) === 'TPROXY';
  const bind = annotation(d, 'sidecar.istio.io/capNetBindService', p.capNetBindService) === 'true';
  const add = [...(tproxy ? ['NET_ADMIN'] : []), ...(bind ? ['NET_BIND_SERVICE'] : [])];
  return {
    allowPrivilegeEscalation: p.privileged,
    capabilities: { ...(add.length ? { add } : {}), drop: ['ALL'] },
    privileged: p.privileged,
    readOnlyRootFilesystem: true,
    ...(tproxy || bind
      ? { runAsNonRoot: false, runAsUser: 0, runAsGroup: 1337 }
      : { runAsNonRoot: true, runAsUser: 1337, runAsGroup: 1337 }),
  };
}

function lifecycle(d: TemplateData, holdProxy: boolean): Json | undefined {
  const p = obj(at(d.values, 'global', 'proxy'));
  if (truthy(p.lifecycle)) return obj(p.lifecycle);
  if (holdProxy) return { postStart: { exec: { command: ['pilot-agent', 'wait'] } } };
  if (d.native)
    return {
      preStop: { exec: { command: ['pilot-agent', 'request', `--debug-port=${statusPort(d)}`, 'POST', 'drain'] } },
    };
  return undefined;
}

/** A probe as Go writes it back: its integer fields are `omitempty`, so a 0 is left out. */
const probe = (p: Json): Json => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== 0));

function probes(d: TemplateData): Json {
  const p = obj(at(d.values, 'global', 'proxy'));
  if (statusPort(d) === '0') return {};
  const httpGet = { path: '/healthz/ready', port: 15021 };
  const a = (k: string, v: unknown) => yamlScalar(annotation(d, `readiness.status.sidecar.istio.io/${k}`, v));
  return {
    ...(truthy(at(p, 'startupProbe', 'enabled'))
      ? {
          startupProbe: probe({
            httpGet,
            initialDelaySeconds: 0,
            periodSeconds: 1,
            timeoutSeconds: 3,
            failureThreshold: at(p, 'startupProbe', 'failureThreshold'),
          }),
        }
      : {}),
    readinessProbe: probe({
      httpGet,
      initialDelaySeconds: a('initialDelaySeconds', p.readinessInitialDelaySeconds),
      periodSeconds: a('periodSeconds', p.readinessPeriodSeconds),
      timeoutSeconds: 3,
      failureThreshold: a('failureThreshold', p.readinessFailureThreshold),
    }),
  };
}

/** sidecar.istio.io/userVolume[Mount]: a JSON map name → volume (mount), ranged in key order; not JSON: none. */
function userEntries(d: TemplateData, key: string): Json[] {
  if (!Object.hasOwn(d.ann, key)) return [];
  try {
    const m = obj(JSON.parse(d.ann[key]));
    return Object.keys(m)
      .sort()
      .map((name) => ({ name, ...obj(m[name]) }));
  } catch {
    return [];
  }
}

function mounts(d: TemplateData): Json[] {
  const g = obj(d.values.global);
  const gke = sprint(g.caName) === 'GkeWorkloadCertificate';
  const m: Json[] = [
    { name: 'workload-socket', mountPath: '/var/run/secrets/workload-spiffe-uds' },
    { name: 'credential-socket', mountPath: '/var/run/secrets/credential-uds' },
    gke
      ? { name: 'gke-workload-certificate', mountPath: '/var/run/secrets/workload-spiffe-credentials', readOnly: true }
      : { name: 'workload-certs', mountPath: '/var/run/secrets/workload-spiffe-credentials' },
  ];
  if (sprint(g.pilotCertProvider) === 'istiod')
    m.push(
      { mountPath: '/var/run/secrets/istio', name: 'istiod-ca-cert' },
      { mountPath: '/var/run/secrets/istio/crl', name: 'istio-ca-crl' },
    );
  m.push({ mountPath: '/var/lib/istio/data', name: 'istio-data' });
  if (Object.hasOwn(d.ann, 'sidecar.istio.io/bootstrapOverride'))
    m.push({ mountPath: '/etc/istio/custom-bootstrap', name: 'custom-bootstrap-volume' });
  m.push(
    { mountPath: '/etc/istio/proxy', name: 'istio-envoy' },
    { mountPath: '/var/run/secrets/tokens', name: 'istio-token' },
  );
  if (truthy(g.mountMtlsCerts)) m.push({ mountPath: '/etc/certs/', name: 'istio-certs', readOnly: true });
  m.push({ name: 'istio-podinfo', mountPath: '/etc/istio/pod' });
  return [...m, ...userEntries(d, 'sidecar.istio.io/userVolumeMount')];
}

export function proxyContainer(d: TemplateData, holdProxy: boolean): Json {
  const g = obj(d.values.global);
  const p = obj(g.proxy);
  const image = annotation(d, 'sidecar.istio.io/proxyImage', p.image);
  const level = (k: string, v: unknown) => annotation(d, `sidecar.istio.io/${k}`, v);
  const args = [
    ...['proxy', 'sidecar', '--domain', `$(POD_NAMESPACE).svc.${sprint(p.clusterDomain)}`],
    `--proxyLogLevel=${level('logLevel', p.logLevel)}`,
    `--proxyComponentLogLevel=${level('componentLogLevel', p.componentLogLevel)}`,
    `--log_output_level=${level('agentLogLevel', at(g, 'logging', 'level'))}`,
  ];
  if (truthy(at(g, 'sts', 'servicePort'))) args.push(`--stsPort=${sprint(at(g, 'sts', 'servicePort'))}`);
  if (truthy(g.logAsJson)) args.push('--log_as_json');
  if (truthy(p.outlierLogPath)) args.push(`--outlierLogPath=${sprint(p.outlierLogPath)}`);
  const hooks = lifecycle(d, holdProxy);
  return {
    name: 'istio-proxy',
    image: image.includes('/') ? image : d.proxyImage,
    ...(d.native ? { restartPolicy: 'Always' } : {}),
    ports: [{ containerPort: 15090, protocol: 'TCP', name: 'http-envoy-prom' }],
    args,
    ...(hooks ? { lifecycle: hooks } : {}),
    env: proxyEnv(d),
    ...(truthy(g.imagePullPolicy) ? { imagePullPolicy: sprint(g.imagePullPolicy) } : {}),
    ...probes(d),
    securityContext: securityContext(d),
    ...(Object.keys(resourcesDefine(d)).length ? { resources: resourcesDefine(d) } : {}),
    volumeMounts: mounts(d),
  };
}

export function volumes(d: TemplateData): Json[] {
  const g = obj(d.values.global);
  // `- emptyDir:` with nothing under it: a volume without a source, which the apiserver defaults to an emptyDir {}
  // before the next webhook (meshgate) sees the pod; written here as meshgate sees it.
  const v: Json[] = [
    { emptyDir: {}, name: 'workload-socket' },
    { emptyDir: {}, name: 'credential-socket' },
    sprint(g.caName) === 'GkeWorkloadCertificate'
      ? { name: 'gke-workload-certificate', csi: { driver: 'workloadcertificates.security.cloud.google.com' } }
      : { emptyDir: {}, name: 'workload-certs' },
  ];
  if (Object.hasOwn(d.ann, 'sidecar.istio.io/bootstrapOverride'))
    v.push({ name: 'custom-bootstrap-volume', configMap: { name: d.ann['sidecar.istio.io/bootstrapOverride'] } });
  v.push(
    { emptyDir: { medium: 'Memory' }, name: 'istio-envoy' },
    { name: 'istio-data', emptyDir: {} },
    {
      name: 'istio-podinfo',
      downwardAPI: {
        items: [
          { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
          { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
        ],
      },
    },
    {
      name: 'istio-token',
      projected: {
        sources: [
          {
            serviceAccountToken: {
              path: 'istio-token',
              expirationSeconds: 43200,
              audience: sprint(at(g, 'sds', 'token', 'aud')),
            },
          },
        ],
      },
    },
  );
  if (sprint(g.pilotCertProvider) === 'istiod') {
    const bundle = truthy(g.trustBundleName) ? sprint(g.trustBundleName) : undefined;
    v.push(
      at(d.values, 'pilot', 'env', 'ENABLE_CLUSTER_TRUST_BUNDLE_API') === true
        ? {
            name: 'istiod-ca-cert',
            projected: {
              sources: [
                { clusterTrustBundle: { name: `istio.io:istiod-ca:${bundle ?? 'root-cert'}`, path: 'root-cert.pem' } },
              ],
            },
          }
        : { name: 'istiod-ca-cert', configMap: { name: bundle ?? 'istio-ca-root-cert' } },
    );
  }
  v.push({ name: 'istio-ca-crl', configMap: { name: 'istio-ca-crl', optional: true } });
  if (truthy(g.mountMtlsCerts))
    v.push({
      name: 'istio-certs',
      secret: { optional: true, secretName: d.serviceAccountName ? `istio.${d.serviceAccountName}` : 'istio.default' },
    });
  v.push(...userEntries(d, 'sidecar.istio.io/userVolume'));
  if (sprint(at(g, 'proxy', 'tracer')) === 'lightstep' && truthy(at(d.proxyConfig, 'tracing', 'tlsSettings')))
    v.push({ name: 'lightstep-certs', secret: { optional: true, secretName: 'lightstep.cacert' } });
  return v;
}

/** global.imagePullSecrets as the template lists them. */
export const pullSecrets = (d: TemplateData): Json[] =>
  asList(at(d.values, 'global', 'imagePullSecrets')).map((name) => ({ name: sprint(name) }));
