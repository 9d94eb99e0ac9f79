/**
 * The volumes behind the mounts of Istio's proxy, judged by what they are (src/policy/judge/istio.ts,
 * istio-gateway.ts): another volume under one of these names is refused.
 */
import { isObject } from '../../util/json.ts';
import { volume, type MountRule } from './checks.ts';
import type { Problem } from './types.ts';

/** The volumes behind the template's mounts, by name; another volume under one of these names is refused. */
export const secretOrConfigMap = (vol: Readonly<Record<string, unknown>>): Problem =>
  isObject(vol.configMap) || isObject(vol.projected) || isObject(vol.secret) || isObject(vol.csi)
    ? undefined
    : `is ${JSON.stringify(vol)}, not the certificate volume the injector adds`;

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
