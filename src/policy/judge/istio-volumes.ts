/**
 * The volumes behind the mounts of Istio's proxy, judged by what they are (src/policy/judge/istio.ts,
 * istio-gateway.ts): another volume under one of these names is refused.
 */
import { isObject } from '../../util/json.ts';
import { volume, type MountRule } from './checks.ts';
import type { ContractContext, Problem } from './types.ts';

/**
 * Where pilot-agent finds the SPIFFE Workload API socket: an emptyDir it serves itself, or, with Istio's SPIRE
 * integration (its `spire` injection template, pkg/kube/inject/testdata/inject/spire-template.iop.yaml), the SPIFFE CSI
 * driver's volume, which mounts the node's SPIRE agent socket. Only that driver: another one would hand the proxy an
 * identity server the pod chose.
 */
const SPIFFE_CSI = volume.equals(
  { csi: { driver: 'csi.spiffe.io', readOnly: true } },
  { csi: { driver: 'csi.spiffe.io' } },
);
const EMPTY_DIR = volume.emptyDir();
export const WORKLOAD_SOCKET: MountRule['volume'] = (vol, ctx) => {
  if (!EMPTY_DIR(vol, ctx) || !SPIFFE_CSI(vol, ctx)) return undefined;
  return `is ${JSON.stringify(vol)}, neither an emptyDir nor the SPIFFE CSI driver's volume (csi.spiffe.io)`;
};

/** The projected token pilot-agent exchanges for the proxy's certificate. */
export const ISTIO_TOKEN: MountRule['volume'] = volume.where((vol) => {
  const sources = isObject(vol.projected) ? vol.projected.sources : undefined;
  return Array.isArray(sources) &&
    sources.length === 1 &&
    isObject(sources[0]) &&
    isObject(sources[0].serviceAccountToken) &&
    sources[0].serviceAccountToken.path === 'istio-token'
    ? undefined
    : 'is not the projected istio-token';
});

/** The downward API volume of the pod's labels and annotations. */
export const POD_INFO: MountRule['volume'] = volume.where((vol) => {
  const d = vol.downwardAPI;
  if (!isObject(d) || !Array.isArray(d.items) || Object.keys(vol).some((k) => k !== 'name' && k !== 'downwardAPI'))
    return 'is not the downward API volume of the pod labels and annotations';
  const ok = d.items.every(
    (i) =>
      isObject(i) &&
      ((i.path === 'labels' && isObject(i.fieldRef) && i.fieldRef.fieldPath === 'metadata.labels') ||
        (i.path === 'annotations' && isObject(i.fieldRef) && i.fieldRef.fieldPath === 'metadata.annotations')),
  );
  return ok ? undefined : 'holds files other than the pod labels and annotations';
});

/**
 * The volumes the proxy reads its roots from (issue 33 §3), exactly as the injection template writes them: the
 * istiod-ca-cert volume is the ConfigMap istiod writes the root into in every namespace (global.trustBundleName,
 * default istio-ca-root-cert) or its ClusterTrustBundle; istio-certs (global.mountMtlsCerts only) the Secret
 * istio.<serviceAccount>; lightstep-certs the Secret lightstep.cacert. Any other ConfigMap, Secret, projected or CSI
 * volume under these names is roots the pod's author chose. No `items`: they could map another key of that
 * ConfigMap onto root-cert.pem.
 */
const sourceKeys = (src: unknown, allowed: readonly string[]): boolean =>
  isObject(src) &&
  Object.keys(src).every(
    (k) => allowed.includes(k) || (k === 'defaultMode' && (src[k] === 420 || src[k] === undefined)),
  );

export const rootCertVolume = (vol: Readonly<Record<string, unknown>>, ctx: ContractContext): Problem => {
  const { cp } = ctx;
  const only = (k: string) => Object.keys(vol).every((x) => x === 'name' || x === k);
  const cm = vol.configMap;
  if (
    only('configMap') &&
    sourceKeys(cm, ['name']) &&
    cp.rootCertConfigMaps.includes((cm as { name?: string }).name ?? '')
  )
    return undefined;
  const projected = vol.projected;
  if (only('projected') && sourceKeys(projected, ['sources'])) {
    const sources = (projected as { sources?: unknown }).sources;
    const one = Array.isArray(sources) && sources.length === 1 && isObject(sources[0]) ? sources[0] : undefined;
    const ctb = one && Object.keys(one).length === 1 ? one.clusterTrustBundle : undefined;
    if (
      isObject(ctb) &&
      Object.keys(ctb).every((k) => k === 'name' || k === 'path') &&
      ctb.path === 'root-cert.pem' &&
      cp.clusterTrustBundles.includes(String(ctb.name))
    )
      return undefined;
  }
  return (
    `is ${JSON.stringify(vol)}: the proxy trusts the root certificate it finds there, which must be istiod's ` +
    `(ConfigMap ${cp.rootCertConfigMaps.join(' or ')}${cp.clusterTrustBundles.length ? `, or ClusterTrustBundle ${cp.clusterTrustBundles.join(' or ')}` : ''})`
  );
};

export const secretVolume =
  (what: string, secretName: (ctx: ContractContext) => string | undefined) =>
  (vol: Readonly<Record<string, unknown>>, ctx: ContractContext): Problem => {
    const want = secretName(ctx);
    if (want === undefined) return `is ${what}, which the installed mesh does not mount`;
    const secret = vol.secret;
    return Object.keys(vol).every((k) => k === 'name' || k === 'secret') &&
      sourceKeys(secret, ['secretName', 'optional']) &&
      (secret as { secretName?: unknown }).secretName === want &&
      (secret as { optional?: unknown }).optional === true
      ? undefined
      : `is ${JSON.stringify(vol)}, not the Secret ${want} the injector mounts (${what})`;
  };

/** global.mountMtlsCerts: the pod's service account's istio.<name> Secret (istio.default without one). */
export const mtlsCerts = secretVolume('the mTLS certificates of global.mountMtlsCerts', (ctx) =>
  ctx.cp.mountMtlsCerts ? `istio.${ctx.pod.serviceAccountName || 'default'}` : undefined,
);
