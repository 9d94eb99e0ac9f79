/**
 * What the installed mesh injects, read from its own configuration (issue 23): managed Istio (AKS, GKE), a private
 * mirror or a distroless build injects images no built-in list knows; the mesh's injector config says which.
 * - Istio: each revision's ConfigMap istio-sidecar-injector[-<revision>], key `values` (JSON): the proxy image is
 *   `global.hub/global.proxy.image` (default proxyv2), or `global.proxy.image` itself when it holds a "/"; the init
 *   and validation containers use the same image unless `global.proxy_init.image` holds a "/"
 *   (pkg/kube/inject/inject.go and the injection template of Istio 1.27).
 * - Linkerd: ConfigMap linkerd-config, key `values` (YAML): `proxy.image.name` for the proxy, the init container
 *   and the network validator (one image since 2.14), and the older `proxyInit.image.name` where set.
 * Repositories only: meshgate judges images by repository (images.ts), so an upgrade of the mesh needs nothing.
 * Pure: the parsed `values` in (src/kube/learned-images.ts parses them, so the node agent never loads a YAML
 * parser), repositories or a sentence saying what is missing out.
 */
import { imageRepository } from './images.ts';

export interface LearnedImages {
  proxy: string[];
  init: string[];
  validator: string[];
}

export type Learned = LearnedImages | { problem: string };

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** The ConfigMaps of Istio's injector: one per revision. */
export function isIstioInjectorConfigMap(name: string): boolean {
  return name === 'istio-sidecar-injector' || name.startsWith('istio-sidecar-injector-');
}

/** A scalar as Go's fmt.Sprint writes it in a template (Istio's global.tag may be a number). */
const scalar = (v: unknown): string | undefined => (typeof v === 'number' ? String(v) : str(v));

/**
 * The proxy image Istio's injector writes for these `values`: `global.proxy.image` as it is when it holds a "/",
 * else `global.hub/<image, default proxyv2>:global.tag` (inject.go ProxyImage and the 1.27 template); undefined
 * when neither gives a registry. The one reader of Istio's values, for learning (below) and `check --pre`.
 */
export function istioProxyImage(values: unknown): string | undefined {
  const global = obj(obj(values).global);
  const named = str(obj(global.proxy).image) ?? 'proxyv2';
  if (named.includes('/')) return named;
  const hub = str(global.hub);
  if (!hub) return undefined;
  const tag = scalar(global.tag);
  return `${hub}/${named}${tag ? `:${tag}` : ''}`;
}

export function istioInjectorImages(values: unknown): Learned {
  const proxyImage = istioProxyImage(values);
  if (!proxyImage) return { problem: 'its values set no global.hub (and global.proxy.image holds no registry)' };
  const proxy = imageRepository(proxyImage);
  const initNamed = str(obj(obj(obj(values).global).proxy_init).image);
  const init = initNamed?.includes('/') ? imageRepository(initNamed) : proxy;
  return { proxy: [proxy], init: [init], validator: [init] };
}

export function isLinkerdConfigMap(name: string): boolean {
  return name === 'linkerd-config';
}

/**
 * The proxy image Linkerd's injector writes for these `values` (linkerd-config): `proxy.image.name`, tagged with
 * `proxy.image.version`, else `linkerdVersion`. The one reader of Linkerd's values, for learning and `check --pre`.
 */
export function linkerdProxyImage(values: unknown): string | undefined {
  const v = obj(values);
  const image = obj(obj(v.proxy).image);
  const name = str(image.name);
  const tag = str(image.version) ?? str(v.linkerdVersion);
  return name && `${name}${tag ? `:${tag}` : ''}`;
}

export function linkerdConfigImages(values: unknown): Learned {
  const proxyImage = linkerdProxyImage(values);
  if (!proxyImage) return { problem: 'its values set no proxy.image.name' };
  const proxy = imageRepository(proxyImage);
  const oldInit = str(obj(obj(obj(values).proxyInit).image).name);
  const init = oldInit ? [proxy, imageRepository(oldInit)] : [proxy];
  return { proxy: [proxy], init, validator: init };
}

/** Every repository of every source, each once. */
export function unionImages(all: Iterable<LearnedImages>): LearnedImages {
  const out = { proxy: new Set<string>(), init: new Set<string>(), validator: new Set<string>() };
  for (const l of all)
    for (const role of ['proxy', 'init', 'validator'] as const) for (const r of l[role]) out[role].add(r);
  return { proxy: [...out.proxy], init: [...out.init], validator: [...out.validator] };
}
