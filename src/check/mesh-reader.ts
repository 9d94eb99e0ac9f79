/**
 * What `meshgate check --pre` reads about the cluster besides what `check` does (kube-reader.ts): the mesh's
 * control plane — Istio's istiod Deployments, its istio-sidecar-injector ConfigMaps (one per revision, whose
 * `values` name the images the injector writes) and revision tags; Linkerd's linkerd-config — and whether the
 * apiserver serves ValidatingAdmissionPolicies. Read-only (list and get), reduced to plain facts; an API refusal
 * is a ReadError the check reports, like every read of kube-reader.ts.
 */
import { AdmissionregistrationV1Api, AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { Read } from './facts.ts';
import type { KubeReader } from './kube-reader.ts';
import { istioProxyImage, linkerdProxyImage } from '../mesh/learn.ts';

/** Items per LIST page; a mesh has a handful of these objects, so one page. */
const PAGE = 500;

export interface Istiod {
  namespace: string;
  name: string;
  /** Label istio.io/rev ("default" when the chart installed no revision). */
  revision: string;
  image?: string;
}

export interface LiveIstioInjector {
  namespace: string;
  name: string;
  revision: string;
  /** The images its templates write, from its `values` (global.hub, .tag, .proxy.image, .proxy_init.image). */
  proxyImage?: string;
  /** Why `values` could not be read, when it could not. */
  error?: string;
}

export interface IstioTag {
  tag: string;
  revision: string;
}

export interface LinkerdConfig {
  namespace: string;
  version?: string;
  proxyImage?: string;
  cniEnabled?: boolean;
  error?: string;
}

export interface MeshSurvey {
  istiods: Read<Istiod[]>;
  injectors: Read<LiveIstioInjector[]>;
  tags: Read<IstioTag[]>;
  linkerd: Read<LinkerdConfig[]>;
}

type Values = Record<string, unknown>;
const obj = (v: unknown): Values => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Values) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function readLiveIstioInjector(
  ns: string,
  name: string,
  revision: string,
  values: string | undefined,
): LiveIstioInjector {
  const at = { namespace: ns, name, revision };
  if (values === undefined) return { ...at, error: 'no data.values' };
  try {
    return { ...at, proxyImage: istioProxyImage(JSON.parse(values)) };
  } catch (err) {
    return { ...at, error: `data.values is not JSON: ${(err as Error).message}` };
  }
}

export function readLinkerdConfig(ns: string, values: string | undefined): LinkerdConfig {
  if (values === undefined) return { namespace: ns, error: 'no data.values' };
  let v: Values;
  try {
    v = obj(parseYaml(values));
  } catch (err) {
    return { namespace: ns, error: `data.values is not YAML: ${(err as Error).message.split('\n')[0]}` };
  }
  return {
    namespace: ns,
    version: str(v.linkerdVersion),
    proxyImage: linkerdProxyImage(v),
    cniEnabled: typeof v.cniEnabled === 'boolean' ? v.cniEnabled : undefined,
  };
}

export class MeshReader {
  readonly #reader: Pick<KubeReader, 'read'>;
  readonly #admission: AdmissionregistrationV1Api;
  readonly #apps: AppsV1Api;
  readonly #core: CoreV1Api;

  constructor(kc: KubeConfig, reader: Pick<KubeReader, 'read'>) {
    this.#reader = reader;
    this.#admission = kc.makeApiClient(AdmissionregistrationV1Api);
    this.#apps = kc.makeApiClient(AppsV1Api);
    this.#core = kc.makeApiClient(CoreV1Api);
  }

  /** The resources admissionregistration.k8s.io/v1 serves (validatingadmissionpolicies from 1.30). */
  async admissionResources(): Promise<Read<string[]>> {
    const r = await this.#reader.read('/apis/admissionregistration.k8s.io/v1', () => this.#admission.getAPIResources());
    if (r === undefined || 'error' in r) return r;
    return r.resources.map((x) => x.name);
  }

  async survey(): Promise<MeshSurvey> {
    const [istiods, injectors, tags, linkerd] = await Promise.all([
      this.#istiods(),
      this.#injectors(),
      this.#tags(),
      this.#linkerd(),
    ]);
    return { istiods, injectors, tags, linkerd };
  }

  async #istiods(): Promise<Read<Istiod[]>> {
    const r = await this.#reader.read('Deployments labelled app=istiod', () =>
      this.#apps.listDeploymentForAllNamespaces({ labelSelector: 'app=istiod', limit: PAGE }),
    );
    if (r === undefined || 'error' in r) return r;
    return r.items.map((d) => ({
      namespace: d.metadata?.namespace ?? '',
      name: d.metadata?.name ?? '',
      revision: d.metadata?.labels?.['istio.io/rev'] || 'default',
      image: d.spec?.template.spec?.containers.find((c) => c.name === 'discovery')?.image,
    }));
  }

  async #injectors(): Promise<Read<LiveIstioInjector[]>> {
    const r = await this.#reader.read('ConfigMaps labelled istio.io/rev', () =>
      this.#core.listConfigMapForAllNamespaces({ labelSelector: 'istio.io/rev', limit: PAGE }),
    );
    if (r === undefined || 'error' in r) return r;
    return r.items
      .filter((c) => c.metadata?.name?.startsWith('istio-sidecar-injector'))
      .map((c) =>
        readLiveIstioInjector(
          c.metadata?.namespace ?? '',
          c.metadata?.name ?? '',
          c.metadata?.labels?.['istio.io/rev'] || 'default',
          c.data?.values,
        ),
      );
  }

  async #tags(): Promise<Read<IstioTag[]>> {
    const r = await this.#reader.read('MutatingWebhookConfigurations labelled istio.io/tag', () =>
      this.#admission.listMutatingWebhookConfiguration({ labelSelector: 'istio.io/tag', limit: PAGE }),
    );
    if (r === undefined || 'error' in r) return r;
    return r.items.map((w) => ({
      tag: w.metadata?.labels?.['istio.io/tag'] ?? '',
      revision: w.metadata?.labels?.['istio.io/rev'] || 'default',
    }));
  }

  async #linkerd(): Promise<Read<LinkerdConfig[]>> {
    const r = await this.#reader.read('ConfigMaps named linkerd-config', () =>
      this.#core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.name=linkerd-config', limit: PAGE }),
    );
    if (r === undefined || 'error' in r) return r;
    return r.items.map((c) => readLinkerdConfig(c.metadata?.namespace ?? '', c.data?.values));
  }
}
