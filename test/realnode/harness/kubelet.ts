// The kubelet of a real node (1.34, built from the control-plane module) on this machine: cgroup v1 without
// systemd, Debian's containerd 1.6, no swap accounting, a small disk budget. Everything per node: root dir, cert
// dir (its default /var/lib/kubelet/pki is NOT derived from the root dir), ports, pod log dir, cgroup root.
// Reference: kubernetes' hack/local-up-cluster.sh (KubeletConfiguration written around its lines 908-1017).
import { join } from 'node:path';
import YAML from 'yaml';

export interface KubeletLayout {
  name: string;
  ip: string;
  /** Per-node ports: the kubelet API (logs/exec) and healthz; all nodes share one namespace. */
  port: number;
  healthzPort: number;
  rootDir: string;
  certDir: string;
  podLogsDir: string;
  /** cgroupfs path below every hierarchy's root, e.g. /meshgate-realnode/<run>/rn-1 (must exist beforehand). */
  cgroupRoot: string;
  containerdSocket: string;
  clusterCaFile: string;
  configFile: string;
  kubeconfigFile: string;
}

export function kubeletConfig(l: KubeletLayout): string {
  return YAML.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: l.ip,
    port: l.port,
    readOnlyPort: 0,
    healthzBindAddress: l.ip,
    healthzPort: l.healthzPort,
    // cgroup v1 is in maintenance mode in 1.34 but allowed while failCgroupV1 is false (its default, said here).
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupsPerQOS: true,
    cgroupRoot: l.cgroupRoot,
    containerRuntimeEndpoint: `unix://${l.containerdSocket}`,
    failSwapOn: false,
    podLogsDir: l.podLogsDir,
    // A test node runs a handful of pods; a low cap keeps a runaway scenario from filling the machine.
    maxPods: 20,
    // The defaults (memory 100Mi, nodefs 10%, imagefs 15%) would evict on a busy shared disk; these only catch
    // a really full machine.
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
    },
    // Images are imported, never pulled: image GC must never delete them.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    resolvConf: '',
    staticPodPath: '',
    registerNode: true,
    serializeImagePulls: false,
    // The kubelet API is reachable only inside the test namespace; the apiserver authenticates with a client
    // certificate of the cluster CA (for logs/exec); no webhook authn/z, so no token reviews per request.
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      x509: { clientCAFile: l.clusterCaFile },
    },
    authorization: { mode: 'AlwaysAllow' },
    // Status every 4 s (default 10 s) so Ready shows up quickly; the default lease duration still applies.
    nodeStatusUpdateFrequency: '4s',
    syncFrequency: '10s',
    fileCheckFrequency: '10s',
    // Pods are deleted at the end of every run; give containers little time to stop.
    shutdownGracePeriod: '0s',
  });
}

export function kubeletArgs(l: KubeletLayout): string[] {
  return [
    `--config=${l.configFile}`,
    `--kubeconfig=${l.kubeconfigFile}`,
    `--root-dir=${l.rootDir}`,
    `--cert-dir=${l.certDir}`,
    `--hostname-override=${l.name}`,
    `--node-ip=${l.ip}`,
    '--v=2',
  ];
}

export function kubeletLayout(
  dir: string,
  p: Omit<KubeletLayout, 'rootDir' | 'certDir' | 'podLogsDir' | 'configFile' | 'kubeconfigFile'>,
): KubeletLayout {
  return {
    ...p,
    rootDir: join(dir, 'kubelet'),
    certDir: join(dir, 'kubelet-pki'),
    podLogsDir: join(dir, 'pod-logs'),
    configFile: join(dir, 'kubelet.yaml'),
    kubeconfigFile: join(dir, 'kubelet.kubeconfig'),
  };
}
