/**
 * The real-workload corpus (issue 31 §3): widely used public charts and manifests nobody here wrote, each pinned to a
 * commit, rendered with the helm the bootstrap builds and injected by the real Istio 1.27 injector (also as it runs
 * on OpenShift) and the real Linkerd injector (scripts/corpus.ts). Only the rendered, injected pods are kept, as test
 * data under test/corpus/data/<id>/ with a SOURCE file naming repository, commit and path; the sources themselves
 * are never copied into the repository.
 */

/** A chart the rendered chart needs in its charts/ directory, taken from a repository at a commit. */
export interface ChartDependency {
  /** The dependency's name in Chart.yaml (its directory under charts/). */
  name: string;
  repo: string;
  commit: string;
  path: string;
}

export interface CorpusSource {
  /** Directory under test/corpus/data, and the name tests print. */
  id: string;
  /** What it is, as a user knows it. */
  title: string;
  repo: string;
  /** The release tag it was taken at, when it has one. */
  tag?: string;
  commit: string;
  kind: 'manifest' | 'chart';
  /** Manifest files, or the chart directory (one entry). */
  paths: string[];
  /** Helm values, beside the chart's defaults. */
  values?: Record<string, unknown>;
  dependencies?: ChartDependency[];
  /** A chart whose Chart.yaml says v0.0.0 in the repository (its release stamps it): the version to stamp. */
  stampVersion?: string;
  /** The meshes it is run under, when not all (a mesh's own component is not run in another mesh). */
  meshes?: readonly CorpusMesh[];
}

const ISTIO = { repo: 'istio/istio', tag: '1.27.0', commit: '7359d8be2504f2b191f7d94156af08e6590d2d1c' };
const PROMETHEUS = { repo: 'prometheus-community/helm-charts', commit: 'cf408a290aec489277a94450bb3511432477a53a' };
const BITNAMI = { repo: 'bitnami/charts', commit: '5165628ae06697f8f68a670bef7739d93c4b7f44' };
const GRAFANA = { repo: 'grafana-community/helm-charts', commit: '3386a1156177c6bcd7fdb1ad4c6b1dda094296e0' };
const BITNAMI_COMMON: ChartDependency = { name: 'common', ...BITNAMI, path: 'bitnami/common' };

function bitnami(name: string, values: Record<string, unknown> = {}): CorpusSource {
  return {
    id: `bitnami-${name}`,
    title: `Bitnami ${name} chart`,
    ...BITNAMI,
    kind: 'chart',
    paths: [`bitnami/${name}`],
    dependencies: [BITNAMI_COMMON],
    values,
  };
}

const promDep = (name: string): ChartDependency => ({ name, ...PROMETHEUS, path: `charts/${name}` });

export const SOURCES: readonly CorpusSource[] = [
  {
    id: 'argo-cd',
    title: "Argo CD's install manifest",
    repo: 'argoproj/argo-cd',
    tag: 'v3.5.1',
    commit: '109ca7ca71139e514114499d294a492e7910a965',
    kind: 'manifest',
    paths: ['manifests/install.yaml'],
  },
  {
    id: 'cert-manager',
    title: "cert-manager's chart",
    repo: 'cert-manager/cert-manager',
    tag: 'v1.21.1',
    commit: '24e33194fb39488eff2bbf10c6dc640f407cad44',
    kind: 'chart',
    paths: ['deploy/charts/cert-manager'],
    stampVersion: 'v1.21.1',
    values: { crds: { enabled: true } },
  },
  {
    id: 'istio-bookinfo',
    title: "Istio's bookinfo sample",
    ...ISTIO,
    kind: 'manifest',
    paths: ['samples/bookinfo/platform/kube/bookinfo.yaml'],
  },
  {
    id: 'istio-samples',
    title: "Istio's httpbin, curl, helloworld and tcp-echo samples",
    ...ISTIO,
    kind: 'manifest',
    paths: [
      'samples/httpbin/httpbin.yaml',
      'samples/curl/curl.yaml',
      'samples/helloworld/helloworld.yaml',
      'samples/tcp-echo/tcp-echo.yaml',
    ],
  },
  {
    // istioctl's and the IstioOperator's gateways: the proxy written into the Deployment (no injection template).
    id: 'istio-ingress-legacy',
    title: "Istio's legacy istio-ingress gateway chart (injectionTemplate empty)",
    ...ISTIO,
    kind: 'chart',
    paths: ['manifests/charts/gateways/istio-ingress'],
    meshes: ['istio', 'istio-openshift'],
    values: {
      global: { hub: 'docker.io/istio', tag: '1.27.0' },
      gateways: { 'istio-ingressgateway': { injectionTemplate: '' } },
    },
  },
  {
    id: 'prometheus',
    title: 'the prometheus chart',
    ...PROMETHEUS,
    kind: 'chart',
    paths: ['charts/prometheus'],
    dependencies: ['alertmanager', 'kube-state-metrics', 'prometheus-node-exporter', 'prometheus-pushgateway'].map(
      promDep,
    ),
  },
  {
    id: 'kube-prometheus-stack',
    title: 'the kube-prometheus-stack chart',
    ...PROMETHEUS,
    kind: 'chart',
    paths: ['charts/kube-prometheus-stack'],
    dependencies: [
      promDep('kube-state-metrics'),
      promDep('prometheus-node-exporter'),
      promDep('prometheus-windows-exporter'),
      { name: 'grafana', ...GRAFANA, path: 'charts/grafana' },
    ],
  },
  {
    // ICMP probes as the chart's values.yaml says to enable them ("Add NET_RAW to enable ICMP"): the corpus' evidence
    // for how admission treats NET_RAW added by name (src/policy/escalation.ts).
    id: 'prometheus-blackbox-exporter',
    title: 'the prometheus-blackbox-exporter chart, ICMP enabled as its values document',
    ...PROMETHEUS,
    kind: 'chart',
    paths: ['charts/prometheus-blackbox-exporter'],
    values: {
      securityContext: {
        runAsUser: 1000,
        runAsGroup: 1000,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'], add: ['NET_RAW'] },
      },
    },
  },
  {
    id: 'grafana',
    title: "Grafana's chart",
    ...GRAFANA,
    kind: 'chart',
    paths: ['charts/grafana'],
  },
  bitnami('redis'),
  bitnami('postgresql'),
  bitnami('mysql'),
  bitnami('mongodb'),
  bitnami('rabbitmq'),
  bitnami('kafka'),
  bitnami('nginx'),
  bitnami('memcached'),
  {
    id: 'ingress-nginx',
    title: 'the ingress-nginx chart',
    repo: 'kubernetes/ingress-nginx',
    tag: 'helm-chart-4.15.1',
    commit: '0a5901f3c64f11e92e487799b8da3f00cca37515',
    kind: 'chart',
    paths: ['charts/ingress-nginx'],
  },
  {
    id: 'microservices-demo',
    title: "Google's microservices-demo (Online Boutique)",
    repo: 'GoogleCloudPlatform/microservices-demo',
    tag: 'v0.10.6',
    commit: '5b3a712ab85ccb8f6f7cd5b720d36ba9a8d041eb',
    kind: 'manifest',
    paths: ['release/kubernetes-manifests.yaml'],
  },
];

/** The meshes each workload is injected by; `istio-openshift` is Istio's injector with PLATFORM=openshift. */
export const CORPUS_MESHES = ['istio', 'istio-openshift', 'linkerd'] as const;
export type CorpusMesh = (typeof CORPUS_MESHES)[number];

/**
 * The namespace the OpenShift pass injects into, with the UID range OpenShift's namespace controller assigns (both
 * annotations hold the same block there): istiod runs that namespace's proxies as 1000650000 + 10000 - 1.
 */
export const OPENSHIFT_NAMESPACE_ANNOTATIONS: Readonly<Record<string, string>> = {
  'openshift.io/sa.scc.uid-range': '1000650000/10000',
  'openshift.io/sa.scc.supplemental-groups': '1000650000/10000',
};
