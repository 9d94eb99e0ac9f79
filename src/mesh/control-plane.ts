/**
 * The mesh's control plane and trust roots, which a pod's proxy must use (issue 33 §3). The proxy is the mesh's
 * binary, but it connects where its configuration says and trusts what its configuration names: pointed at an
 * "istiod" the pod's author runs (a Service in the author's namespace, an external name, or the real name mapped to
 * another address), with roots the author supplies, it is the mesh's binary configured by the author, and nothing
 * about its traffic is the mesh's any more. So every value that chooses where the proxy connects or whom it trusts
 * is pinned to the control plane that is installed:
 * - the mesh's defaults (an istiod of the default revision in istio-system; Linkerd in namespace linkerd with
 *   cluster.local), as their installers write them;
 * - what the installed mesh says, learned from its own ConfigMaps (src/kube/learned-images.ts): every revision's
 *   istio-sidecar-injector values (its namespace, revision, caAddress, pilotCertProvider, trustBundleName,
 *   mountMtlsCerts) and mesh config (defaultConfig.discoveryAddress, proxyMetadata); Linkerd's linkerd-config
 *   values (clusterDomain, identityTrustDomain, the tracing collector) and linkerd-identity-trust-roots;
 * - what the operator configures (config.controlPlane: addresses, trust anchors).
 * Pure: values in, facts out.
 */
import type { MeshName } from './types.ts';

export interface ControlPlane {
  /**
   * host:port the proxy may dial, outside the redirect, for its configuration and certificates (Istio's
   * discoveryAddress and CA_ADDR; Linkerd's destination, policy and identity services, and the tracing collector
   * its values configure). Compared case-insensitively.
   */
  readonly addresses: readonly string[];
  /** Linkerd: the identities the proxy requires of those services (LINKERD2_PROXY_*_SVC_NAME). */
  readonly names: readonly string[];
  /** Linkerd: the identity trust anchors, each certificate as its base64 body without whitespace. */
  readonly trustAnchors: readonly string[];
  /** Istio: PILOT_CERT_PROVIDER, which chooses where the proxy's roots come from. */
  readonly certProviders: readonly string[];
  /** Istio: the ConfigMaps istiod writes the root certificate into, in every namespace (istio-ca-root-cert). */
  readonly rootCertConfigMaps: readonly string[];
  /** Istio: ClusterTrustBundles istiod publishes the root in (pilot.env.ENABLE_CLUSTER_TRUST_BUNDLE_API). */
  readonly clusterTrustBundles: readonly string[];
  /** Istio: whether a revision mounts the pod's istio.<serviceAccount> Secret at /etc/certs (global.mountMtlsCerts). */
  readonly mountMtlsCerts: boolean;
  /**
   * Istio: the values the mesh itself gives the variables that choose the proxy's roots, its CA, its own certificate
   * files and the identity it expects of istiod (meshConfig.defaultConfig.proxyMetadata). A variable absent here may
   * not be set at all.
   */
  readonly metadata: Readonly<Record<string, readonly string[]>>;
  /** Istio: ProxyConfig caCertificatesPem entries the mesh sets (extra roots for workload mTLS). */
  readonly caCertificatesPem: readonly string[];
}

/** What the mesh's ConfigMaps or the configuration add; every field optional. */
export type ControlPlaneFacts = { -readonly [K in keyof ControlPlane]?: ControlPlane[K] };

/**
 * Variables pilot-agent reads that choose its roots, its CA, its certificate files or the identity it requires of
 * istiod (pilot/cmd/pilot-agent/options: XDS_ROOT_CA, CA_ROOT_CA, ISTIOD_SAN, PROV_CERT, OUTPUT_CERTS,
 * FILE_MOUNTED_CERTS, CA_PROVIDER; pkg/istio-agent: the ISTIO_META_TLS_CLIENT_* files read with FILE_MOUNTED_CERTS).
 * Pinned to the values the mesh's own proxyMetadata gives them; none of them is set by default.
 */
export const ISTIO_TRUST_VARIABLES = [
  'XDS_ROOT_CA',
  'CA_ROOT_CA',
  'ISTIOD_SAN',
  'PROV_CERT',
  'OUTPUT_CERTS',
  'FILE_MOUNTED_CERTS',
  'CA_PROVIDER',
  'ISTIO_META_TLS_CLIENT_ROOT_CERT',
  'ISTIO_META_TLS_CLIENT_CERT_CHAIN',
  'ISTIO_META_TLS_CLIENT_KEY',
] as const;

const EMPTY: ControlPlane = {
  addresses: [],
  names: [],
  trustAnchors: [],
  certProviders: [],
  rootCertConfigMaps: [],
  clusterTrustBundles: [],
  mountMtlsCerts: false,
  metadata: {},
  caCertificatesPem: [],
};

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Istio's istiod of revision `rev` in `ns`, as the istio-discovery chart names its Service (port 15012). */
export const istiodAddress = (ns: string, rev = '') => `istiod${rev ? `-${rev}` : ''}.${ns}.svc:15012`;

/** Linkerd's services in `ns` as its injector writes them (charts/partials _proxy.tpl). */
export function linkerdFacts(ns: string, clusterDomain: string, trustDomain: string): ControlPlaneFacts {
  const id = (sa: string) => `${sa}.${ns}.serviceaccount.identity.${ns}.${trustDomain}`;
  return {
    addresses: [
      `linkerd-dst-headless.${ns}.svc.${clusterDomain}.:8086`,
      `linkerd-policy.${ns}.svc.${clusterDomain}.:8090`,
      `linkerd-identity-headless.${ns}.svc.${clusterDomain}.:8080`,
    ],
    names: [id('linkerd-identity'), id('linkerd-destination')],
  };
}

/** What the mesh's installer writes by default: one istiod in istio-system; Linkerd in linkerd, cluster.local. */
export function defaultControlPlane(mesh: MeshName): ControlPlaneFacts {
  if (mesh === 'istio')
    return {
      addresses: [istiodAddress('istio-system')],
      certProviders: ['istiod'],
      rootCertConfigMaps: ['istio-ca-root-cert'],
      clusterTrustBundles: ['istio.io:istiod-ca:root-cert'],
    };
  if (mesh === 'linkerd') return linkerdFacts('linkerd', 'cluster.local', 'cluster.local');
  return {};
}

/**
 * What one revision's istio-sidecar-injector `values` say (the ConfigMap lives in istiod's namespace, `ns`): its
 * istiod and CA addresses, where the proxy's roots come from and whether it mounts certificates from a Secret
 * (injection-template.yaml: CA_ADDR, PILOT_CERT_PROVIDER, istiod-ca-cert, istio-certs).
 */
export function istioInjectorFacts(values: unknown, ns: string): ControlPlaneFacts {
  const v = obj(values);
  const global = obj(v.global);
  const istioNs = str(global.istioNamespace) ?? ns;
  const rev = str(v.revision) ?? '';
  const addresses = [istiodAddress(istioNs, rev)];
  // A remote cluster's injector points its proxies at the primary's istiod through these Services.
  if (str(global.remotePilotAddress)) addresses.push(istiodAddress(istioNs), `istiod-remote.${istioNs}.svc:15012`);
  const ca = str(global.caAddress);
  if (ca) addresses.push(ca);
  const bundle = str(global.trustBundleName);
  const ctb = obj(obj(v.pilot).env).ENABLE_CLUSTER_TRUST_BUNDLE_API;
  return {
    addresses,
    certProviders: [str(global.pilotCertProvider) ?? 'istiod'],
    rootCertConfigMaps: [bundle ?? 'istio-ca-root-cert'],
    clusterTrustBundles: ctb === true || ctb === 'true' ? [`istio.io:istiod-ca:${bundle ?? 'root-cert'}`] : [],
    mountMtlsCerts: global.mountMtlsCerts === true,
  };
}

/**
 * What a revision's mesh config (ConfigMap istio[-<revision>], key `mesh`, parsed) says: the discovery address
 * every proxy is given, the trust variables and extra roots its proxyMetadata and caCertificatesPem set.
 */
export function istioMeshFacts(mesh: unknown): ControlPlaneFacts {
  const dc = obj(obj(mesh).defaultConfig);
  const out: ControlPlaneFacts = {};
  const discovery = str(dc.discoveryAddress);
  if (discovery) out.addresses = [discovery];
  const meta = obj(dc.proxyMetadata);
  const metadata: Record<string, string[]> = {};
  for (const name of ISTIO_TRUST_VARIABLES) if (typeof meta[name] === 'string') metadata[name] = [meta[name]];
  if (Object.keys(metadata).length) out.metadata = metadata;
  if (Array.isArray(dc.caCertificatesPem))
    out.caCertificatesPem = dc.caCertificatesPem.filter((p): p is string => typeof p === 'string');
  return out;
}

/** What linkerd-config's `values` say, for the control plane installed in `ns`. */
export function linkerdConfigFacts(values: unknown, ns: string): ControlPlaneFacts {
  const v = obj(values);
  const clusterDomain = str(v.clusterDomain) ?? 'cluster.local';
  const facts = linkerdFacts(ns, clusterDomain, str(v.identityTrustDomain) ?? clusterDomain);
  // The tracing collector its values name (charts/partials _proxy.tpl LINKERD2_PROXY_TRACE_COLLECTOR_SVC_*).
  const tracing = obj(obj(obj(v.proxy).tracing).collector);
  const collector = str(tracing.endpoint);
  if (collector) facts.addresses = [...(facts.addresses ?? []), collector];
  const mi = obj(tracing.meshIdentity);
  const [sa, saNs] = [str(mi.serviceAccountName), str(mi.namespace)];
  const trustDomain = str(v.identityTrustDomain) ?? clusterDomain;
  if (sa && saNs) facts.names = [...(facts.names ?? []), `${sa}.${saNs}.serviceaccount.identity.${ns}.${trustDomain}`];
  const pem = str(v.identityTrustAnchorsPEM);
  if (pem) facts.trustAnchors = pemBodies(pem);
  return facts;
}

/**
 * The certificates of a PEM bundle, each as its base64 body without whitespace: how the proxy reads them (every
 * CERTIFICATE block), so a bundle is compared certificate by certificate, whatever its line breaks and indentation.
 * Anything outside the blocks is ignored; an unterminated block is read up to its end.
 */
export function pemBodies(pem: string): string[] {
  const out: string[] = [];
  const re = /-----BEGIN CERTIFICATE-----([\s\S]*?)(?:-----END CERTIFICATE-----|$)/g;
  for (const m of pem.matchAll(re)) {
    const body = m[1].replace(/\s+/g, '');
    if (body) out.push(body);
  }
  return out;
}

const union = (a: readonly string[], b: readonly string[] = []) => [...new Set([...a, ...b])];

/** Every source together: each list the union of theirs, mountMtlsCerts if any revision mounts. */
export function mergeControlPlane(...parts: ReadonlyArray<ControlPlaneFacts | undefined>): ControlPlane {
  let cp: ControlPlane = EMPTY;
  for (const p of parts) {
    if (!p) continue;
    const metadata: Record<string, readonly string[]> = { ...cp.metadata };
    for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = union(metadata[k] ?? [], v);
    cp = {
      addresses: union(cp.addresses, p.addresses),
      names: union(cp.names, p.names),
      trustAnchors: union(cp.trustAnchors, p.trustAnchors),
      certProviders: union(cp.certProviders, p.certProviders),
      rootCertConfigMaps: union(cp.rootCertConfigMaps, p.rootCertConfigMaps),
      clusterTrustBundles: union(cp.clusterTrustBundles, p.clusterTrustBundles),
      mountMtlsCerts: cp.mountMtlsCerts || p.mountMtlsCerts === true,
      metadata,
      caCertificatesPem: union(cp.caCertificatesPem, p.caCertificatesPem),
    };
  }
  return cp;
}

/** Whether `address` is one of the control plane's (host case-insensitively, a trailing dot of the host ignored). */
export function isControlPlaneAddress(cp: ControlPlane, address: string): boolean {
  const norm = normaliseAddress(address);
  return cp.addresses.some((a) => normaliseAddress(a) === norm);
}

function normaliseAddress(address: string): string {
  const at = address.lastIndexOf(':');
  const host = (at < 0 ? address : address.slice(0, at)).toLowerCase().replace(/\.$/, '');
  return at < 0 ? host : `${host}${address.slice(at)}`;
}

/** The host names of the control plane's addresses, lower-cased, without a trailing dot (IP literals left out). */
export function controlPlaneHosts(cp: ControlPlane): string[] {
  const hosts = new Set<string>();
  for (const a of cp.addresses) {
    const at = a.lastIndexOf(':');
    const host = (at < 0 ? a : a.slice(0, at)).toLowerCase().replace(/\.$/, '');
    if (host && !/^\[|^[\d.]+$/.test(host)) hosts.add(host);
  }
  return [...hosts];
}
