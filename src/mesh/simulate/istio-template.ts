/**
 * A model of Istio 1.27's `sidecar` injection template (manifests/charts/istio-control/istio-discovery/files/
 * injection-template.yaml): what it renders for a pod from the injector's values, the MeshConfig and the pod's own
 * annotations, written as the objects the template's YAML parses to — the containers, init container, volumes,
 * labels and annotations that meshgate judges. Each branch follows one `{{ if }}` of the template; the names of
 * the values and annotations are the template's. What is not modelled is listed in istio-inject.ts (`DIFFERS`).
 */
import { canonicalResources } from './quantity.ts';
import { type Json, obj, sprint, truthy } from './types.ts';

/** Everything the template reads, computed once per pod by istio-inject.ts. */
export interface TemplateData {
  ann: Readonly<Record<string, string>>;
  labels: Readonly<Record<string, string>>;
  appContainers: string[];
  /** containers[].ports of the pod, for ISTIO_META_POD_PORTS. */
  podPorts: unknown[];
  values: Json;
  mesh: Json;
  /** The merged ProxyConfig (MeshConfig.defaultConfig, then the pod's proxy.istio.io/config). */
  proxyConfig: Json;
  revision: string;
  native: boolean;
  proxyImage: string;
  owner?: { apiVersion: string; kind: string; name: string; namespace: string };
  serviceAccountName: string;
}

const at = (v: unknown, ...path: string[]): unknown => path.reduce<unknown>((o, k) => obj(o)[k], v);

/** `annotation .ObjectMeta NAME default`: the pod's annotation when present (even empty), else the default's text. */
const annotation = (d: TemplateData, name: string, def: unknown): string =>
  Object.hasOwn(d.ann, name) ? d.ann[name] : sprint(def);

/** template.go excludeInboundPort: the status port added to the excluded inbound ports unless listed or 0. */
export function excludeInboundPort(port: string, excluded: string): string {
  const p = port.trim();
  if (p === '' || p === '0') return excluded;
  const out: string[] = [];
  for (const q of excluded.split(',')) {
    if (q === p) return excluded;
    if (q.trim()) out.push(q.trim());
  }
  return [...out, p].join(',');
}

/** A number the template pastes unquoted parses as a YAML integer; anything else stays text. */
const yamlScalar = (s: string): unknown => (/^-?\d+$/.test(s) ? Number(s) : s);

export function interceptionMode(d: TemplateData): string {
  return annotation(d, 'sidecar.istio.io/interceptionMode', d.proxyConfig.interceptionMode ?? 'REDIRECT');
}

const statusPort = (d: TemplateData) =>
  annotation(d, 'status.sidecar.istio.io/port', at(d.values, 'global', 'proxy', 'statusPort'));

/** The `resources` define: the pod's proxyCPU/Memory[Limit] annotations, else global.proxy.resources. */
function resourcesDefine(d: TemplateData): Json {
  const a = (k: string) => d.ann[`sidecar.istio.io/${k}`];
  const set = (k: string) => Object.hasOwn(d.ann, `sidecar.istio.io/${k}`);
  if (!['proxyCPU', 'proxyMemory', 'proxyCPULimit', 'proxyMemoryLimit'].some(set))
    return canonicalResources(obj(at(d.values, 'global', 'proxy', 'resources')));
  const out: Json = {};
  if (set('proxyCPU') || set('proxyMemory'))
    out.requests = {
      ...(set('proxyCPU') ? { cpu: a('proxyCPU') } : {}),
      ...(set('proxyMemory') ? { memory: a('proxyMemory') } : {}),
    };
  if (set('proxyCPULimit') || set('proxyMemoryLimit'))
    out.limits = {
      ...(set('proxyCPULimit') ? { cpu: a('proxyCPULimit') } : {}),
      ...(set('proxyMemoryLimit') ? { memory: a('proxyMemoryLimit') } : {}),
    };
  return canonicalResources(out);
}

const metadataEnv = (d: TemplateData) =>
  Object.keys(obj(d.proxyConfig.proxyMetadata))
    .sort()
    .map((name) => ({ name, value: sprint(obj(d.proxyConfig.proxyMetadata)[name]) }));

/** istio-init (or istio-validation with pilot.cni.enabled). */
export function initContainer(d: TemplateData): Json {
  const g = obj(d.values.global);
  const p = obj(g.proxy);
  const cni = truthy(at(d.values, 'pilot', 'cni', 'enabled'));
  const mode = interceptionMode(d);
  const initImage = annotation(d, 'sidecar.istio.io/proxyImage', at(g, 'proxy_init', 'image'));
  const excluded = excludeInboundPort(
    statusPort(d),
    annotation(d, 'traffic.sidecar.istio.io/excludeInboundPorts', p.excludeInboundPorts),
  );
  const args = [
    'istio-iptables',
    ...['-p', sprint(d.mesh.proxyListenPort ?? 15001), '-z', sprint(d.mesh.proxyInboundListenPort ?? 15006)],
    ...['-u', String(1337), '-m', mode],
    ...['-i', annotation(d, 'traffic.sidecar.istio.io/includeOutboundIPRanges', p.includeIPRanges)],
    ...['-x', annotation(d, 'traffic.sidecar.istio.io/excludeOutboundIPRanges', p.excludeIPRanges)],
    ...['-b', annotation(d, 'traffic.sidecar.istio.io/includeInboundPorts', p.includeInboundPorts)],
    ...['-d', excluded ? `15090,15021,${excluded}` : '15090,15021'],
  ];
  for (const [flag, key, value] of [
    ['-q', 'includeOutboundPorts', p.includeOutboundPorts],
    ['-o', 'excludeOutboundPorts', p.excludeOutboundPorts],
  ] as const) {
    const name = `traffic.sidecar.istio.io/${key}`;
    if (Object.hasOwn(d.ann, name) || (truthy(value) && sprint(value) !== ''))
      args.push(flag, annotation(d, name, value));
  }
  for (const [flag, name] of [
    ['-k', 'traffic.sidecar.istio.io/kubevirtInterfaces'],
    ['-k', 'istio.io/reroute-virtual-interfaces'],
    ['-c', 'traffic.sidecar.istio.io/excludeInterfaces'],
  ] as const)
    if (Object.hasOwn(d.ann, name)) args.push(flag, d.ann[name]);
  args.push(`--log_output_level=${annotation(d, 'sidecar.istio.io/agentLogLevel', at(g, 'logging', 'level'))}`);
  if (truthy(g.logAsJson)) args.push('--log_as_json');
  if (cni) args.push('--run-validation', '--skip-rule-apply');
  else if (truthy(at(g, 'proxy_init', 'forceApplyIptables'))) args.push('--force-apply');
  if (truthy(g.nativeNftables)) args.push('--native-nftables');
  const env = metadataEnv(d);
  // `-u` and the validator's identity: 1337 unless istiod runs on OpenShift (ProxyUID from the namespace's range).
  const id = 1337;
  return {
    name: cni ? 'istio-validation' : 'istio-init',
    image: initImage.includes('/') ? initImage : d.proxyImage,
    args,
    ...(truthy(g.imagePullPolicy) ? { imagePullPolicy: sprint(g.imagePullPolicy) } : {}),
    ...(env.length ? { env } : {}),
    ...(Object.keys(resourcesDefine(d)).length ? { resources: resourcesDefine(d) } : {}),
    securityContext: {
      allowPrivilegeEscalation: p.privileged,
      privileged: p.privileged,
      capabilities: cni ? { drop: ['ALL'] } : { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
      ...(cni
        ? { readOnlyRootFilesystem: true, runAsGroup: id, runAsUser: id, runAsNonRoot: true }
        : { readOnlyRootFilesystem: false, runAsGroup: 0, runAsNonRoot: false, runAsUser: 0 }),
    },
  };
}

/** The labels and annotations the template's metadata sets (merged over the pod's own). */
export function templateMetadata(d: TemplateData): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  const l = d.labels;
  const p = obj(at(d.values, 'global', 'proxy'));
  const canonical = (
    l['service.istio.io/canonical-name'] ||
    l['app.kubernetes.io/name'] ||
    l.app ||
    d.owner?.name ||
    ''
  )
    .slice(0, 63)
    .replace(/-$/, '');
  const labels: Record<string, string> = {
    'security.istio.io/tlsMode': l['security.istio.io/tlsMode'] || 'istio',
    'service.istio.io/canonical-name': canonical,
    'service.istio.io/canonical-revision':
      l['service.istio.io/canonical-revision'] || l['app.kubernetes.io/version'] || l.version || 'latest',
  };
  if (sprint(obj(d.proxyConfig.proxyMetadata).ISTIO_META_ENABLE_HBONE) === 'true')
    labels['networking.istio.io/tunnel'] = l['networking.istio.io/tunnel'] || 'http';
  const annotations: Record<string, string> = { 'istio.io/rev': d.revision || 'default' };
  const first = d.appContainers[0];
  if (first !== undefined) {
    if (!Object.hasOwn(d.ann, 'kubectl.kubernetes.io/default-logs-container'))
      annotations['kubectl.kubernetes.io/default-logs-container'] = first;
    if (!Object.hasOwn(d.ann, 'kubectl.kubernetes.io/default-container'))
      annotations['kubectl.kubernetes.io/default-container'] = first;
  }
  if (truthy(at(d.values, 'pilot', 'cni', 'enabled'))) {
    const t = (k: string) => `traffic.sidecar.istio.io/${k}`;
    annotations['sidecar.istio.io/interceptionMode'] = interceptionMode(d);
    const inc = annotation(d, t('includeOutboundIPRanges'), p.includeIPRanges);
    if (truthy(inc)) annotations[t('includeOutboundIPRanges')] = inc;
    const exc = annotation(d, t('excludeOutboundIPRanges'), p.excludeIPRanges);
    if (truthy(exc)) annotations[t('excludeOutboundIPRanges')] = exc;
    annotations[t('includeInboundPorts')] = annotation(d, t('includeInboundPorts'), p.includeInboundPorts);
    annotations[t('excludeInboundPorts')] = excludeInboundPort(
      statusPort(d),
      annotation(d, t('excludeInboundPorts'), p.excludeInboundPorts),
    );
    if (Object.hasOwn(d.ann, t('includeOutboundPorts')) || truthy(p.includeOutboundPorts))
      annotations[t('includeOutboundPorts')] = annotation(d, t('includeOutboundPorts'), p.includeOutboundPorts);
    if (Object.hasOwn(d.ann, t('excludeOutboundPorts')) || sprint(p.excludeOutboundPorts) !== '')
      annotations[t('excludeOutboundPorts')] = annotation(d, t('excludeOutboundPorts'), p.excludeOutboundPorts);
    for (const k of [t('kubevirtInterfaces'), 'istio.io/reroute-virtual-interfaces', t('excludeInterfaces')])
      if (truthy(d.ann[k])) annotations[k] = d.ann[k];
  }
  return { labels, annotations };
}

export { annotation, resourcesDefine, statusPort, yamlScalar, metadataEnv, at };
