/**
 * Istio's injection of one pod, simulated (issue 34 §5): whether istiod injects it (inject.go injectRequired), the
 * `sidecar` template rendered from the injector's values and the MeshConfig (istio-template.ts, istio-proxy.ts),
 * merged onto the pod the way istiod merges it (by container, volume and env name; the pod's own istio-proxy fields
 * kept: reapplyOverwrittenContainers), then istiod's post-processing that meshgate judges (webhook.go postProcessPod:
 * the Prometheus merge and probe variables, the sidecar.istio.io/status annotation, the container order). Tested
 * field by field against the real injector built from istio.io/istio 1.27 (test/mesh/simulate-istio-real.test.ts).
 */
import { parse as parseYaml } from 'yaml';
import { matchesSelector } from '../../util/selector.ts';
import type { IstioInjector } from './istio-config.ts';
import { STOCK_RELEASE } from './istio-config.ts';
import { initContainer, interceptionMode, type TemplateData, templateMetadata } from './istio-template.ts';
import { proxyContainer, pullSecrets, volumes } from './istio-proxy.ts';
import {
  copy,
  type Json,
  asList,
  obj,
  type PodJson,
  type Simulated,
  type SimulationContext,
  sprint,
  strMap,
  truthy,
} from './types.ts';

/** Where the model is known to be narrower than istiod; printed with every simulated answer. */
export const ISTIO_DIFFERS: readonly string[] = [
  "app containers' probes are not rewritten to the proxy's port 15020 (meshgate does not judge them)",
  'ProxyConfig resources and OpenShift UID ranges are not read; annotation values are taken literally',
];

/** Kubernetes' namespaces istiod never injects (inject.go IgnoredNamespaces). */
const IGNORED = ['kube-system', 'kube-public'];

/** inject.go injectRequired: hostNetwork, ignored namespaces, the pod's switch, the selectors, the policy. */
export function injectionRequired(inj: IstioInjector, pod: PodJson, namespace: string): string | undefined {
  const spec = obj(pod.spec);
  if (spec.hostNetwork === true) return 'the pod uses hostNetwork';
  if (IGNORED.includes(namespace)) return `istiod never injects namespace ${namespace}`;
  const labels = strMap(obj(pod.metadata).labels);
  const ann = strMap(obj(pod.metadata).annotations);
  const sw = Object.hasOwn(labels, 'sidecar.istio.io/inject')
    ? labels['sidecar.istio.io/inject']
    : ann['sidecar.istio.io/inject'];
  let explicit: boolean | undefined = sw === 'true' ? true : sw === 'false' ? false : undefined;
  if (explicit === undefined && inj.neverInjectSelector.some((s) => nonEmpty(s) && matchesSelector(s, labels)))
    explicit = false;
  if (explicit === undefined && inj.alwaysInjectSelector.some((s) => nonEmpty(s) && matchesSelector(s, labels)))
    explicit = true;
  if (inj.policy !== 'enabled' && inj.policy !== 'disabled') return `its policy "${inj.policy}" turns injection off`;
  const required = explicit ?? inj.policy === 'enabled';
  if (required) return undefined;
  return explicit === false
    ? 'the pod opts out (sidecar.istio.io/inject=false or neverInjectSelector)'
    : 'its policy is disabled and the pod does not opt in';
}

const nonEmpty = (s: { matchLabels?: object; matchExpressions?: readonly unknown[] }) =>
  Object.keys(s.matchLabels ?? {}).length > 0 || (s.matchExpressions ?? []).length > 0;

/** DefaultProxyConfig (pkg/config/mesh), then MeshConfig.defaultConfig, then the pod's proxy.istio.io/config. */
function proxyConfig(inj: IstioInjector, ann: Record<string, string>): Json {
  const pc: Json = {
    configPath: './etc/istio/proxy',
    serviceCluster: 'istio-proxy',
    drainDuration: '45s',
    terminationDrainDuration: '5s',
    discoveryAddress: 'istiod.istio-system.svc:15012',
    proxyAdminPort: 15000,
    controlPlaneAuthPolicy: 'MUTUAL_TLS',
    binaryPath: '/usr/local/bin/envoy',
    statNameLength: 189,
    statusPort: 15020,
  };
  const merge = (over: Json) => {
    for (const [k, v] of Object.entries(over))
      pc[k] = k === 'proxyMetadata' ? { ...obj(pc.proxyMetadata), ...obj(v) } : v;
  };
  merge(obj(inj.mesh.defaultConfig));
  const text = ann['proxy.istio.io/config'];
  if (text !== undefined) {
    try {
      merge(obj(parseYaml(text)));
    } catch {
      // istiod logs and ignores a ProxyConfig annotation it cannot read; so does the model.
    }
  }
  return pc;
}

/** inject.go ProxyImage: hub/image:tag, the tag's -distroless/-debug replaced by the variant asked for. */
function proxyImage(values: Json, pc: Json, ann: Record<string, string>): string {
  const g = obj(values.global);
  const name = truthy(obj(g.proxy).image) ? sprint(obj(g.proxy).image) : 'proxyv2';
  let tag = g.tag === undefined || g.tag === null ? '' : sprint(g.tag);
  const type =
    ann['sidecar.istio.io/proxyImageType'] ?? (sprint(obj(pc.image).imageType ?? '') || sprint(g.variant ?? ''));
  if (type !== '' && type !== '<nil>') {
    for (const t of ['distroless', 'debug'])
      if (tag.endsWith(`-${t}`)) {
        tag = tag.slice(0, -t.length - 1);
        break;
      }
    if (type !== 'default') tag = `${tag}-${type}`;
  }
  return `${sprint(g.hub)}/${name}:${tag}`;
}

type C = Json & { name: string };
const byName = (l: unknown, name: string) => (asList(l) as C[]).find((c) => c.name === name);

/** Strategic merge of one container onto another: objects merged, env by name, the rest replaced. */
function mergeContainer(base: C, over: Json): C {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (k === 'env' || k === 'volumeMounts' || k === 'ports') {
      const key = k === 'env' ? 'name' : k === 'ports' ? 'containerPort' : 'mountPath';
      const merged = [...asList(out[k])] as Json[];
      for (const e of asList(v) as Json[]) {
        const i = merged.findIndex((m) => m[key] === e[key]);
        if (i >= 0) merged[i] = { ...merged[i], ...e };
        else merged.push(e);
      }
      out[k] = merged;
    } else if (v && typeof v === 'object' && !Array.isArray(v) && out[k] && typeof out[k] === 'object')
      out[k] = { ...obj(out[k]), ...v };
    else out[k] = v;
  }
  return out as C;
}

/** The template's containers merged by name into the pod's list: the pod's own fields win (reapplyOverwritten…). */
function mergeList(pod: unknown, tmpl: C[]): C[] {
  const out = [...(asList(pod) as C[])];
  for (const t of tmpl) {
    const i = out.findIndex((c) => c.name === t.name);
    if (i < 0) out.push(t);
    else {
      const own = { ...out[i] };
      if (own.image === 'auto') delete own.image;
      out[i] = mergeContainer(t, own);
    }
  }
  return out;
}

function move(l: C[], name: string, first: boolean): C[] {
  const c = l.find((x) => x.name === name);
  if (!c) return l;
  const rest = l.filter((x) => x !== c);
  return first ? [c, ...rest] : [...rest, c];
}

export function simulateIstio(inj: IstioInjector, input: PodJson, ctx: SimulationContext): Simulated {
  const by = `Istio's injector (${inj.source}${inj.revision ? `, revision ${inj.revision}` : ''})`;
  const differs = [...ISTIO_DIFFERS];
  if (!inj.stockSidecar)
    differs.unshift(
      `its sidecar template is not Istio ${STOCK_RELEASE}'s, which the simulation follows: values are read as ${STOCK_RELEASE} reads them`,
    );
  const notRequired = injectionRequired(inj, input, ctx.namespace);
  if (notRequired) return { kind: 'not-injected', by, why: notRequired };
  const pod = copy(input);
  const meta = obj(pod.metadata);
  const spec = obj(pod.spec);
  const ann = strMap(meta.annotations);
  const templates = ann['inject.istio.io/templates']?.split(',').map((t) => t.trim()) ?? inj.defaultTemplates;
  const missing = templates.filter((t) => !inj.templates.includes(t));
  if (missing.length)
    return {
      kind: 'unavailable',
      why: `${by} has no template ${missing.join(', ')} (inject.istio.io/templates): istiod fails the injection, so the pod is refused while its webhook fails closed`,
    };
  // Only the sidecar template is modelled: a gateway, waypoint or custom template is not guessed at.
  const unknown = templates.filter((t) => t !== 'sidecar');
  if (unknown.length)
    return {
      kind: 'unavailable',
      why: `${by}: template ${unknown.join(', ')} is not simulated (only Istio ${STOCK_RELEASE}'s sidecar template is)`,
    };
  const pc = proxyConfig(inj, ann);
  const nativeAnn = ann['sidecar.istio.io/nativeSidecar'];
  const native = (nativeAnn || String(ctx.nativeSidecars)) !== 'false';
  const containers = asList(spec.containers) as C[];
  const d: TemplateData = {
    ann,
    labels: strMap(meta.labels),
    appContainers: containers.filter((c) => c.name !== 'istio-proxy').map((c) => c.name),
    podPorts: containers.flatMap((c) => asList(c.ports)),
    values: inj.values,
    mesh: inj.mesh,
    proxyConfig: pc,
    revision: inj.revision,
    native,
    proxyImage: proxyImage(inj.values, pc, ann),
    owner: ctx.owner && { ...ctx.owner, namespace: ctx.namespace },
    serviceAccountName: typeof spec.serviceAccountName === 'string' ? spec.serviceAccountName : '',
  };
  const mode = interceptionMode(d);
  // A BoolValue in ProxyConfig (JSON true), a plain boolean in the values.
  const hold =
    pc.holdApplicationUntilProxyStarts === true ||
    obj(obj(inj.values.global).proxy).holdApplicationUntilProxyStarts === true;
  const proxy = proxyContainer(d, hold && !native) as C;
  const tInit: C[] = mode === 'NONE' && !native ? [] : mode !== 'NONE' ? [initContainer(d) as C] : [];
  if (native) tInit.push(proxy);
  const tContainers: C[] = native ? [] : [proxy];
  const tVolumes = volumes(d) as C[];
  // The pod's own istio-proxy moves to the init containers when the template makes it native (RunTemplate).
  if (native && byName(spec.containers, 'istio-proxy')) {
    spec.initContainers = [...asList(spec.initContainers), byName(spec.containers, 'istio-proxy')];
    spec.containers = containers.filter((c) => c.name !== 'istio-proxy');
  }
  spec.initContainers = mergeList(spec.initContainers, tInit);
  spec.containers = mergeList(spec.containers, tContainers);
  const vols = [...(asList(spec.volumes) as C[])];
  for (const v of tVolumes) {
    const i = vols.findIndex((x) => x.name === v.name);
    if (i >= 0) vols[i] = v;
    else vols.push(v);
  }
  spec.volumes = vols;
  const secrets = pullSecrets(d);
  if (secrets.length)
    spec.imagePullSecrets = [
      ...asList(spec.imagePullSecrets),
      ...secrets.filter((s) => !byName(spec.imagePullSecrets, s.name as string)),
    ];
  const tm = templateMetadata(d);
  meta.labels = { ...strMap(meta.labels), ...tm.labels };
  const annotations: Record<string, string> = { ...ann, ...tm.annotations };
  postProcess(spec, annotations, inj, pc, hold);
  annotations['sidecar.istio.io/status'] = JSON.stringify({
    initContainers: tInit.length ? tInit.map((c) => c.name) : null,
    containers: tContainers.length ? tContainers.map((c) => c.name) : null,
    volumes: tVolumes.map((v) => v.name),
    imagePullSecrets: secrets.length ? secrets.map((s) => s.name) : null,
    revision: inj.revision || 'default',
  });
  Object.assign(annotations, inj.injectedAnnotations);
  meta.annotations = annotations;
  pod.metadata = meta;
  pod.spec = spec;
  return { kind: 'injected', pod, by, differs };
}

/** webhook.go applyPrometheusMerge, the probers variable of applyRewrite, reorderPod. */
function postProcess(spec: Json, ann: Record<string, string>, inj: IstioInjector, pc: Json, hold: boolean): void {
  const all = [...(asList(spec.initContainers) as C[]), ...(asList(spec.containers) as C[])];
  const proxy = all.find((c) => c.name === 'istio-proxy');
  const port = sprint(pc.statusPort ?? 15020);
  const scrape = ann['prometheus.io/scrape'];
  const mergeOn = ann['prometheus.istio.io/merge-metrics'] ?? sprint(inj.mesh.enablePrometheusMerge ?? true);
  if (proxy && scrape !== 'false' && mergeOn !== 'false' && ann['prometheus.io/port'] !== port) {
    const cfg = Object.fromEntries(
      (['scrape', 'path', 'port'] as const)
        .filter((k) => ann[`prometheus.io/${k}`] !== undefined)
        .map((k) => [k, ann[`prometheus.io/${k}`]]),
    );
    if (Object.keys(cfg).length)
      proxy.env = [...asList(proxy.env), { name: 'ISTIO_PROMETHEUS_ANNOTATIONS', value: JSON.stringify(cfg) }];
    Object.assign(ann, {
      'prometheus.io/port': port,
      'prometheus.io/path': '/stats/prometheus',
      'prometheus.io/scrape': 'true',
    });
  }
  const rewrite =
    ann['sidecar.istio.io/rewriteAppHTTPProbers'] ??
    sprint(obj(inj.values.sidecarInjectorWebhook).rewriteAppHTTPProbe ?? false);
  const probed = all.some(
    (c) =>
      c.name !== 'istio-proxy' &&
      ['readinessProbe', 'livenessProbe', 'startupProbe'].some((k) => {
        const p = obj(c[k]);
        return p.grpc !== undefined || p.httpGet !== undefined || p.tcpSocket !== undefined;
      }),
  );
  if (proxy && rewrite === 'true' && probed)
    proxy.env = [...asList(proxy.env), { name: 'ISTIO_KUBE_APP_PROBERS', value: '{}' }];
  let init = asList(spec.initContainers) as C[];
  const containers = move(asList(spec.containers) as C[], 'istio-proxy', hold);
  if (init.some((c) => c.name === 'istio-proxy')) {
    for (const n of ['enable-core-dump', 'istio-proxy', 'istio-validation', 'istio-init']) init = move(init, n, true);
  } else {
    init = move(move(move(init, 'istio-validation', true), 'istio-init', false), 'enable-core-dump', false);
  }
  spec.initContainers = init;
  spec.containers = containers;
}
