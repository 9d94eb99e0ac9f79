/**
 * The proxy of Istio's legacy gateway charts, field by field (manifests/charts/gateways/istio-ingress and
 * istio-egress at Istio 1.27, what istioctl and the IstioOperator install for gateways whose `injectionTemplate` is
 * empty, the default there): no injector is involved, the chart writes the proxy into the Deployment itself — `proxy
 * router` as the pod's only container, its identity on the pod's securityContext, `istio-envoy` an emptyDir on disk,
 * the mesh configuration from the `istio[-<revision>]` ConfigMap, gateway certificates mounted read-only. A gateway
 * needs no redirect (it is the proxy): what is judged is that it runs the mesh's proxy from the mesh's files.
 *
 * Residual, stated in docs/security.md: such a proxy reads the mesh configuration (its control plane among it) from
 * the ConfigMap `istio[-<revision>]` of its own namespace, which whoever may write ConfigMaps there controls; a
 * gateway injected by istiod (the istio/gateway chart) gets it from istiod instead and is the safer shape.
 */
import { isObject } from '../../util/json.ts';
import {
  absent,
  anyLiteral,
  env,
  fieldRef,
  httpGetProbe,
  mounts,
  securityContext,
  volume,
  type MountRule,
} from './checks.ts';
import { APISERVER_DEFAULTED, SIZING, TIGHTENING, TOKEN_MOUNT } from './common.ts';
import { ISTIO_PROXY_ENV } from './istio-env.ts';
import { ISTIO_PROXY } from './istio.ts';
import { ISTIO_TOKEN, POD_INFO, rootCertVolume, secretVolume, WORKLOAD_SOCKET } from './istio-volumes.ts';
import { mountPathProblem } from './paths.ts';
import type { ContainerContract, ContractContext, Problem } from './types.ts';

/** The chart's ConfigMap of the mesh configuration: `istio`, or `istio-<revision>` for a revision's gateway. */
const MESH_CONFIG = volume.where((vol) => {
  const cm = vol.configMap;
  const others = Object.keys(vol).filter((k) => k !== 'name' && k !== 'configMap');
  if (!isObject(cm) || others.length || typeof cm.name !== 'string' || !/^istio(-[a-z0-9-]+)?$/.test(cm.name))
    return 'is not the ConfigMap istio[-<revision>] of the mesh configuration';
  const extra = Object.keys(cm).filter((k) => !['name', 'optional', 'defaultMode'].includes(k));
  return extra.length ? `selects ${extra.join(', ')} of the mesh configuration` : undefined;
});

const GATEWAY_SECRET = volume.where((vol) =>
  isObject(vol.secret) && Object.keys(vol).every((k) => k === 'name' || k === 'secret')
    ? undefined
    : 'is not a Secret of the gateway',
);

/** The chart's istio-certs: its service account's istio.<name> Secret, as the injected proxy's (istio-volumes.ts). */
const GATEWAY_MTLS_CERTS = secretVolume(
  "the gateway's mTLS certificates",
  (ctx) => `istio.${ctx.pod.serviceAccountName || 'default'}`,
);

const MOUNTS: readonly MountRule[] = [
  TOKEN_MOUNT,
  { name: 'workload-socket', mountPath: '/var/run/secrets/workload-spiffe-uds', volume: WORKLOAD_SOCKET },
  { name: 'credential-socket', mountPath: '/var/run/secrets/credential-uds', volume: volume.emptyDir() },
  { name: 'workload-certs', mountPath: '/var/run/secrets/workload-spiffe-credentials', volume: volume.emptyDir() },
  // The agent writes Envoy's bootstrap here: on disk in this chart (the injected proxy's is in memory).
  { name: 'istio-envoy', mountPath: '/etc/istio/proxy', volume: volume.emptyDir() },
  { name: 'config-volume', mountPath: '/etc/istio/config', volume: MESH_CONFIG },
  { name: 'istiod-ca-cert', mountPath: '/var/run/secrets/istio', volume: volume.where(rootCertVolume) },
  { name: 'istio-token', mountPath: '/var/run/secrets/tokens', readOnly: true, volume: ISTIO_TOKEN },
  { name: 'istio-certs', mountPath: '/etc/certs', readOnly: true, volume: volume.where(GATEWAY_MTLS_CERTS) },
  { name: 'istio-data', mountPath: '/var/lib/istio/data', volume: volume.emptyDir() },
  { name: 'podinfo', mountPath: '/etc/istio/pod', volume: POD_INFO },
  // The chart's default secretVolumes: the gateway's certificates, each a directory of its own under /etc/istio.
  ...['ingressgateway-certs', 'ingressgateway-ca-certs', 'egressgateway-certs', 'egressgateway-ca-certs'].map(
    (name): MountRule => ({ name, mountPath: `/etc/istio/${name}`, readOnly: true, volume: GATEWAY_SECRET }),
  ),
];

/**
 * The chart's `secretVolumes` and `configVolumes` (the gateway's TLS certificates): a Secret or ConfigMap, read-only,
 * where it cannot shadow what the proxy runs or reads (src/policy/judge/paths.ts).
 */
function certificateMount(m: Record<string, unknown>, ctx: ContractContext): Problem {
  const where = mountPathProblem(m.mountPath as string);
  if (where) return `mounts volume ${m.name} at ${where}`;
  const extra = Object.keys(m).filter((k) => !['name', 'mountPath', 'readOnly'].includes(k) && m[k] !== undefined);
  if (extra.length) return `mounts volume ${m.name} with ${extra.join(', ')}`;
  if (m.readOnly !== true) return `mounts volume ${m.name} writable; the chart mounts certificates read-only`;
  const vol = ctx.pod.volumes.get(m.name as string);
  if (!vol || !(isObject(vol.secret) || isObject(vol.configMap)))
    return `mounts volume ${m.name}, which is not a Secret or ConfigMap of certificates`;
  return undefined;
}

export const ISTIO_LEGACY_GATEWAY_PROXY: ContainerContract = {
  producer: "Istio's legacy gateway chart (istio-ingress, istio-egress)",
  fields: {
    image: ISTIO_PROXY.fields.image,
    command: ISTIO_PROXY.fields.command,
    args: ISTIO_PROXY.fields.args,
    ports: ISTIO_PROXY.fields.ports,
    env: env({
      names: { ...ISTIO_PROXY_ENV.names, NODE_NAME: { from: [fieldRef('spec.nodeName')] } },
      other: anyLiteral,
    }),
    readinessProbe: httpGetProbe(['/healthz/ready'], () => [15021]),
    lifecycle: absent('the chart writes no hooks'),
    // Not root (the default): the identity is the pod's; `runAsRoot: true` leaves the securityContext out.
    securityContext: securityContext(
      [
        () => ({
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
          readOnlyRootFilesystem: true,
        }),
        () => ({}),
      ],
      TIGHTENING,
    ),
    volumeMounts: mounts({ rules: MOUNTS, extra: certificateMount }),
    ...APISERVER_DEFAULTED,
    ...SIZING,
  },
};
