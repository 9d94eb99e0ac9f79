// Linkerd on the real nodes, as a user installs it next to meshgate (docs/linkerd.md): Linkerd's REAL proxy
// injector (test/e2e/harness/linkerd.ts) with the control plane chart pointed at the tier's Linkerd image
// (harness/linkerd-image.ts: stand-in proxy, real linkerd2-proxy-init and linkerd-network-validator), linkerd-cni
// chained on the nodes (harness/linkerd-cni.ts), meshgate with the linkerd profile. Namespaces opt in to Linkerd by
// the annotation linkerd.io/inject=enabled, to meshgate by its label.
import type { ControlPlane } from '../../e2e/harness/controlplane.ts';
import { installLinkerd, startLinkerdInjector, type LinkerdInjector } from '../../e2e/harness/linkerd.ts';
import type { TierMesh } from './cni.ts';
import { MESHGATE_REF } from './images.ts';
import type { V1Pod } from '@kubernetes/client-node';
import { LINKERD_PROXY_UID } from './linkerd-cni.ts';
import { LINKERD_PROXY_REF, LINKERD_PROXY_REPO, LINKERD_PROXY_TAG } from './linkerd-image.ts';
import { plainPod } from './pods.ts';
import { TIER_APPS } from './mesh.ts';
import { PROBE_HOST, PROBE_PORT } from './judge.ts';

/**
 * Where the validators connect: meshgate's (validator.probeAddress) and Linkerd's own (networkValidator.connectAddr,
 * whose chart default 1.1.1.1:20001 and binary default are real addresses) both get the judge's TEST-NET-3 address,
 * which nothing routes out of the run's network namespace: only the pod's redirect brings the connection back.
 */
const PROBE = `${PROBE_HOST}:${PROBE_PORT}`;

/** The chart values the tier gives Linkerd's injector (the rest are the chart's defaults). */
export const LINKERD_TIER_VALUES = {
  proxy: { image: { name: LINKERD_PROXY_REPO, version: LINKERD_PROXY_TAG } },
  networkValidator: { connectAddr: PROBE },
};

/** Linkerd's injector with the tier's values, installed for meshgate (registered, its ConfigMaps: installLinkerd). */
export async function startTierLinkerdInjector(cp: ControlPlane): Promise<LinkerdInjector> {
  const l = await startLinkerdInjector(cp, LINKERD_TIER_VALUES);
  await installLinkerd(cp, l);
  return l;
}

/** meshgate's config on the Linkerd tier: the linkerd profile recognising the tier's image. */
export function linkerdMeshgateConfig(): Record<string, unknown> {
  return {
    validator: { image: MESHGATE_REF, probeAddress: PROBE },
    recognisedImages: { proxy: [LINKERD_PROXY_REPO], init: [LINKERD_PROXY_REPO], validator: [LINKERD_PROXY_REPO] },
    apps: TIER_APPS,
  };
}

/** Linkerd's opt-in for a namespace meshgate guards (the label meshgate.io/inject=enabled). */
export function linkerdOptIn(mesh: TierMesh, labels: Record<string, string>): Record<string, string> | undefined {
  return mesh === 'linkerd' && labels['meshgate.io/inject'] === 'enabled'
    ? { 'linkerd.io/inject': 'enabled' }
    : undefined;
}

/**
 * A pod shaped like Linkerd's CNI-mode injection, by hand (the judge controls: no webhook touches it): app +
 * linkerd-proxy (the stand-in, UID 2102), no linkerd-init, so linkerd-cni redirects it where it is chained.
 */
export function linkerdShapedPod(name: string, nodeName: string): V1Pod {
  const pod = plainPod(name, nodeName);
  pod.spec!.containers.push({
    name: 'linkerd-proxy',
    image: LINKERD_PROXY_REF,
    imagePullPolicy: 'Never',
    readinessProbe: { httpGet: { path: '/ready', port: 4191 }, periodSeconds: 2, failureThreshold: 30 },
    securityContext: {
      runAsUser: LINKERD_PROXY_UID,
      runAsGroup: LINKERD_PROXY_UID,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    },
  });
  return pod;
}

/**
 * The same by hand in init mode (a judge control): linkerd-init as Linkerd's injector writes it (the chart's
 * defaults: the REAL linkerd2-proxy-init, non-root with NET_ADMIN and NET_RAW, iptables nft) before the proxy, so
 * the redirect is proxy-init's own on a node without linkerd-cni.
 */
export function linkerdInitPod(name: string, nodeName: string): V1Pod {
  const pod = linkerdShapedPod(name, nodeName);
  pod.spec!.initContainers = [
    {
      name: 'linkerd-init',
      image: LINKERD_PROXY_REF,
      imagePullPolicy: 'Never',
      command: ['/usr/lib/linkerd/linkerd2-proxy-init'],
      args: [
        ...['--firewall-bin-path', 'iptables-nft', '--firewall-save-bin-path', 'iptables-nft-save', '--ipv6=false'],
        ...['--incoming-proxy-port', '4143', '--outgoing-proxy-port', '4140', '--proxy-uid', '2102'],
        ...['--inbound-ports-to-ignore', '4190,4191,4567,4568', '--outbound-ports-to-ignore', '4567,4568'],
      ],
      securityContext: {
        allowPrivilegeEscalation: false,
        capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
        privileged: false,
        readOnlyRootFilesystem: true,
        runAsGroup: 65534,
        runAsNonRoot: true,
        runAsUser: 65534,
      },
      volumeMounts: [{ mountPath: '/run', name: 'linkerd-proxy-init-xtables-lock' }],
    },
  ];
  pod.spec!.volumes = [{ name: 'linkerd-proxy-init-xtables-lock', emptyDir: {} }];
  return pod;
}
