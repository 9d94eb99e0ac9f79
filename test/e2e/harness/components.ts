// Command lines of the control-plane components. Everything listens on 127.0.0.1 only, on ports picked at
// start, and keeps its state in the control plane's temp dir.
import { join } from 'node:path';

export interface Layout {
  dir: string;
  etcdClientPort: number;
  etcdPeerPort: number;
  apiserverPort: number;
  controllerManagerPort: number;
  schedulerPort: number;
  kwokPort: number;
}

/** Service ClusterIPs come from here; the first address (10.96.0.1) is the `kubernetes` Service. */
export const SERVICE_CIDR = '10.96.0.0/16';
/** Pod IPs kwok hands out; far from the service range and fits thousands of pods. */
export const POD_CIDR = '10.244.0.0/16';
/** Flags whose values are cluster address ranges (comma-separated lists). */
const CIDR_FLAGS = ['--service-cluster-ip-range', '--cluster-cidr', '--cidr'];

/**
 * Every address range a control plane started with these extra apiserver flags uses: no route may reach any of
 * them (test/support/isolation.ts). A test pins that it covers every range flag the components are given.
 */
export function clusterCidrs(extraApiserverArgs: readonly string[] = []): string[] {
  const named = extraApiserverArgs.flatMap((a) => {
    const [flag, value] = a.split('=', 2);
    return CIDR_FLAGS.includes(flag) && value ? value.split(',') : [];
  });
  return [...new Set([SERVICE_CIDR, POD_CIDR, ...named])];
}
/** Service-account token issuer, the usual in-cluster name. */
export const SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** Files written by the PKI step (see controlplane.ts). */
export function pkiPaths(dir: string) {
  const p = (f: string) => join(dir, 'pki', f);
  return {
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    apiserverCert: p('apiserver.crt'),
    apiserverKey: p('apiserver.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    adminKubeconfig: join(dir, 'admin.kubeconfig'),
    controllerManagerKubeconfig: p('controller-manager.kubeconfig'),
    schedulerKubeconfig: p('scheduler.kubeconfig'),
  };
}

export function etcdArgs(l: Layout, extra: readonly string[] = []): string[] {
  const client = `http://127.0.0.1:${l.etcdClientPort}`;
  const peer = `http://127.0.0.1:${l.etcdPeerPort}`;
  return [
    '--name=meshgate-e2e',
    `--data-dir=${join(l.dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=meshgate-e2e=${peer}`,
    // Test data is thrown away: skipping fsync makes writes ~10x faster on a shared disk.
    '--unsafe-no-fsync',
    '--log-level=warn',
    ...extra,
  ];
}

/** Admission plugins on top of the defaults (--enable-admission-plugins adds to the default set). */
export const ADMISSION_PLUGINS = [
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'PodSecurity',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ResourceQuota',
];

export function apiserverArgs(l: Layout, extra: string[], featureGates: Record<string, boolean>): string[] {
  const pki = pkiPaths(l.dir);
  const gates = Object.entries(featureGates).map(([k, v]) => `${k}=${v}`);
  return [
    `--etcd-servers=http://127.0.0.1:${l.etcdClientPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${l.apiserverPort}`,
    // No real Service endpoints for `kubernetes`: nothing in-cluster needs to reach the apiserver through it.
    '--endpoint-reconciler-type=none',
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--authorization-mode=Node,RBAC',
    `--client-ca-file=${pki.caCert}`,
    `--tls-cert-file=${pki.apiserverCert}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--service-account-issuer=${SA_ISSUER}`,
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    `--enable-admission-plugins=${ADMISSION_PLUGINS.join(',')}`,
    // meshgate's fallback injects a privileged init container; a real cluster allows that, so must the test one.
    '--allow-privileged=true',
    `--cert-dir=${join(l.dir, 'apiserver-certs')}`,
    '--profiling=false',
    ...(gates.length > 0 ? [`--feature-gates=${gates.join(',')}`] : []),
    ...extra,
  ];
}

/**
 * What the controller manager and the scheduler take alike: their kubeconfig (also to authenticate and authorize
 * callers), their secure port on loopback, their own cert dir, no leader election (one of each), no profiling.
 */
function controlLoopArgs(kubeconfig: string, port: number, certDir: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--leader-elect=false',
    '--profiling=false',
  ];
}

export function controllerManagerArgs(l: Layout): string[] {
  const pki = pkiPaths(l.dir);
  return [
    ...controlLoopArgs(
      pki.controllerManagerKubeconfig,
      l.controllerManagerPort,
      join(l.dir, 'controller-manager-certs'),
    ),
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${pki.saKey}`,
    `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
  ];
}

export function schedulerArgs(l: Layout): string[] {
  return controlLoopArgs(pkiPaths(l.dir).schedulerKubeconfig, l.schedulerPort, join(l.dir, 'scheduler-certs'));
}

/** Nodes carrying this annotation are the ones kwok fakes a kubelet for. */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export function kwokArgs(l: Layout, stageConfigs: string[]): string[] {
  return [
    `--kubeconfig=${pkiPaths(l.dir).adminKubeconfig}`,
    '--manage-all-nodes=false',
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
    // kwok's own HTTP server (healthz, logs/exec stubs); without it kwok would bind 0.0.0.0:<node-port>.
    `--server-address=127.0.0.1:${l.kwokPort}`,
    `--node-port=${l.kwokPort}`,
    '--node-ip=127.0.0.1',
    `--cidr=${POD_CIDR}`,
    ...stageConfigs.flatMap((c) => ['--config', c]),
  ];
}
