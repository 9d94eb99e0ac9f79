// linkerd-cni on a real node, installed the way its installer (the linkerd2-cni chart's install-cni.sh) does it:
// the binary in the node's CNI bin dir, a kubeconfig whose context is `linkerd-cni-context` (the plugin loads it
// with that CurrentContext override, whatever the file's current-context says), and its entry appended to the
// chain with the chart's defaults (cni_network_config in charts/linkerd2-cni/templates/cni-plugin.yaml): proxy
// ports 4143 in / 4140 out, proxy UID 2102, the proxy's admin and control ports 4191 and 4190 not redirected,
// iptables nft, no IPv6. linkerd-cni GETs the pod (CNI_ARGS) and redirects it when it has a `linkerd-proxy`
// container (or native sidecar) and no `linkerd-init`, running iptables-nft through nsenter.
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { ControlPlane } from '../../e2e/harness/controlplane.ts';
import type { CertificateAuthority } from '../../e2e/harness/pki.ts';
import { findMeshBuild } from '../../meshbin/binaries.ts';
import type { CniNodeLayout, PluginConf } from './cni.ts';

/** The user linkerd-cni authenticates as (its kubeconfig's client certificate). */
export const LINKERD_CNI_USER = 'meshgate-e2e:linkerd-cni';
/** Linkerd's proxy ports and UID, as the linkerd2-cni chart's defaults and the control plane's agree. */
export const LINKERD_PORTS = { inbound: 4143, outbound: 4140, admin: 4191, control: 4190 } as const;
export const LINKERD_PROXY_UID = 2102;

/** linkerd-cni's own dir on the node: its kubeconfig (what install-cni.sh writes to /etc/cni/net.d/ZZZ-…). */
const linkerdDir = (l: CniNodeLayout) => join(dirname(l.confDir), 'linkerd-cni');

export function linkerdCniPlugin(l: CniNodeLayout): PluginConf {
  return {
    name: 'linkerd-cni',
    type: 'linkerd-cni',
    log_level: 'debug',
    kubernetes: { kubeconfig: join(linkerdDir(l), 'linkerd-cni-kubeconfig') },
    linkerd: {
      'incoming-proxy-port': LINKERD_PORTS.inbound,
      'outgoing-proxy-port': LINKERD_PORTS.outbound,
      'proxy-uid': LINKERD_PROXY_UID,
      'ports-to-redirect': [],
      'inbound-ports-to-ignore': [String(LINKERD_PORTS.admin), String(LINKERD_PORTS.control)],
      simulate: false,
      'use-wait-flag': false,
      'iptables-mode': 'nft',
      ipv6: false,
    },
  };
}

/** The binary (scripts/build-linkerd.sh) in the node's bin dir and its kubeconfig with the context it loads. */
export function prepareLinkerdCni(l: CniNodeLayout, server: string, ca: CertificateAuthority): void {
  const dir = linkerdDir(l);
  mkdirSync(dir, { recursive: true });
  copyFileSync(findMeshBuild('linkerd').bin('linkerd-cni'), join(l.binDir, 'linkerd-cni'));
  chmodSync(join(l.binDir, 'linkerd-cni'), 0o755);
  const client = ca.issue({ commonName: LINKERD_CNI_USER, usage: 'client' });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server, 'certificate-authority-data': b64(ca.certPem) } }],
    users: [
      {
        name: 'linkerd-cni',
        user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) },
      },
    ],
    contexts: [{ name: 'linkerd-cni-context', context: { cluster: 'local', user: 'linkerd-cni' } }],
    'current-context': 'linkerd-cni-context',
  };
  writeFileSync(join(dir, 'linkerd-cni-kubeconfig'), JSON.stringify(kc, null, 2), { mode: 0o600 });
}

/** What the linkerd2-cni chart's ClusterRole grants its DaemonSet (pods, namespaces; services for the API ports). */
export async function grantLinkerdCni(cp: ControlPlane): Promise<void> {
  const rbac = cp.kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: 'meshgate-e2e:linkerd-cni' },
      rules: [
        { apiGroups: [''], resources: ['pods', 'nodes', 'namespaces', 'services'], verbs: ['list', 'get', 'watch'] },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'meshgate-e2e:linkerd-cni' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'meshgate-e2e:linkerd-cni' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: LINKERD_CNI_USER }],
    },
  });
}
