/**
 * The compiled configuration a namespace's pods are judged with. Everywhere but Istio on OpenShift it is the
 * configuration itself; with `proxy.idsFrom: openshift`, istiod gives each namespace's proxy the UID/GID of that
 * namespace's range (src/mesh/istio-openshift.ts), so the identity every rule exempts, the identity the mesh's
 * containers must carry and the one meshgate's validator runs as (Istio's loopback probe is redirected only for the
 * proxy's UID) are that namespace's. Each distinct pair is compiled once, on first use, never per review: a
 * bounded map per configuration (a new configuration, e.g. with learned images, starts a new one).
 */
import type { ProxyIds } from '../mesh/istio-openshift.ts';
import { compileConfig, type Compiled } from './compile.ts';

/**
 * OpenShift gives every namespace its own range, so there are as many pairs as namespaces with pods: past this many
 * the oldest compiled pair is dropped and compiled again when needed (~1 ms), keeping memory bounded (each is a few
 * KiB plus the contracts built for it).
 */
export const MAX_ID_VARIANTS = 256;

const variants = new WeakMap<Compiled, Map<string, Compiled>>();

/** The configuration with the proxy's (and a loopback validator's) UID/GID replaced; `base` itself when equal. */
export function withProxyIds(base: Compiled, ids: ProxyIds): Compiled {
  const { proxy, validator } = base.config;
  if (ids.uid === proxy.uid && ids.gid === (proxy.gid ?? proxy.uid)) return base;
  let byIds = variants.get(base);
  if (!byIds) {
    byIds = new Map();
    variants.set(base, byIds);
  }
  const key = `${ids.uid}/${ids.gid}`;
  const hit = byIds.get(key);
  if (hit) return hit;
  const derived = compileConfig({
    ...base.config,
    proxy: { ...proxy, uid: ids.uid, gid: ids.gid },
    validator: base.probe.loopback ? { ...validator, uid: ids.uid, gid: ids.gid } : validator,
  });
  if (byIds.size >= MAX_ID_VARIANTS) byIds.delete(byIds.keys().next().value as string);
  byIds.set(key, derived);
  return derived;
}

/**
 * The configuration for pods of `namespace`: with `proxy.idsFrom: openshift`, the namespace's IDs from the cache
 * (`idsOf`), or `unknown` while the cache has not seen the namespace (the caller refuses with a retryable message:
 * judging with the wrong IDs would refuse the real proxy and admit a container running as it).
 */
export function configForNamespace(
  base: Compiled,
  namespace: string,
  idsOf: ((namespace: string) => ProxyIds | undefined) | undefined,
): { ok: true; cfg: Compiled } | { ok: false; message: string } {
  if (base.config.proxy.idsFrom !== 'openshift') return { ok: true, cfg: base };
  const ids = idsOf?.(namespace);
  if (!ids)
    return {
      ok: false,
      message:
        `meshgate does not know namespace ${namespace} yet, so it cannot tell the proxy UID/GID istiod gives its ` +
        'pods (proxy.idsFrom: openshift); retry in a few seconds',
    };
  return { ok: true, cfg: withProxyIds(base, ids) };
}
