/**
 * Node objects shaped like a real kubelet's (labels, annotations, managedFields, taints, capacity, the kubelet's
 * five conditions plus meshgate's, addresses, nodeInfo, a cached-image list), 5–10 KiB of JSON each, with
 * meshgate's label/condition/evidence as the node agent publishes them. The mix: 80 % verified, 15 % not
 * (mesh plugin missing), 5 % not yet judged; kubelets v1.33 and v1.34.
 */
import {
  CONDITION_TYPE as NODE_CONDITION,
  EVIDENCE_ANNOTATION as NODE_EVIDENCE_ANNOTATION,
  VERIFIED_LABEL as NODE_VERIFIED_LABEL,
} from '../src/contract/node.ts';

const ZONES = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'];
const TS = '2025-06-01T08:00:00Z';

function condition(type: string, status: string, reason: string, message: string) {
  return { type, status, lastHeartbeatTime: TS, lastTransitionTime: TS, reason, message };
}

function image(i: number, n: number) {
  const repo = `registry.example.com/platform/service-${(i * 31 + n) % 97}`;
  return {
    names: [
      `${repo}@sha256:${((i * 131 + n) % 997).toString(16).padStart(4, '0').repeat(16)}`,
      `${repo}:v1.${n}.${i % 10}`,
    ],
    sizeBytes: 20_000_000 + ((i * n) % 90_000_000),
  };
}

function managedField(manager: string, operation: string, subresource?: string) {
  return {
    manager,
    operation,
    apiVersion: 'v1',
    time: TS,
    fieldsType: 'FieldsV1',
    ...(subresource ? { subresource } : {}),
    fieldsV1: {
      'f:metadata': {
        'f:labels': { '.': {}, 'f:kubernetes.io/arch': {}, 'f:kubernetes.io/hostname': {}, 'f:kubernetes.io/os': {} },
      },
      'f:status': {
        'f:conditions': {
          'k:{"type":"Ready"}': {
            '.': {},
            'f:lastHeartbeatTime': {},
            'f:message': {},
            'f:reason': {},
            'f:status': {},
            'f:type': {},
          },
        },
      },
    },
  };
}

function nameOf(i: number): string {
  return `ip-10-${(i >> 8) & 255}-${i & 255}-${(i * 7) % 250}.eu-west-1.compute.internal`;
}

export function kubeletNode(i: number) {
  const name = nameOf(i);
  const verdict = i % 20 === 19 ? undefined : i % 20 >= 16 ? 'false' : 'true';
  const zone = ZONES[i % ZONES.length];
  const kubelet = i % 4 === 0 ? 'v1.33.5' : 'v1.34.1';
  const evidence = JSON.stringify({
    runtime: 'containerd',
    pluginType: 'istio-cni',
    file: '10-calico.conflist',
    sha256: 'ab'.repeat(32),
    plugins: verdict === 'true' ? ['calico', 'bandwidth', 'portmap', 'istio-cni'] : ['calico', 'bandwidth', 'portmap'],
    candidates: [{ file: '10-calico.conflist', outcome: 'selected' }],
    checkedAt: TS,
  });
  const meshCondition =
    verdict === undefined
      ? []
      : [
          verdict === 'true'
            ? condition(
                NODE_CONDITION,
                'True',
                'verified',
                'containerd takes its default network from 10-calico.conflist, whose chain runs istio-cni after calico',
              )
            : condition(
                NODE_CONDITION,
                'False',
                'mesh_plugin_missing',
                'containerd takes its default network from 10-calico.conflist, whose chain does not include istio-cni',
              ),
        ];
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `6c7b${i.toString(16).padStart(4, '0')}-1d2e-4f3a-9b8c-${'0a1b2c3d4e5f'.slice(0, 12)}`,
      resourceVersion: String(1_000_000 + i * 17),
      creationTimestamp: TS,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/instance-type': 'm6i.2xlarge',
        'beta.kubernetes.io/os': 'linux',
        'failure-domain.beta.kubernetes.io/region': 'eu-west-1',
        'failure-domain.beta.kubernetes.io/zone': zone,
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'm6i.2xlarge',
        'topology.kubernetes.io/region': 'eu-west-1',
        'topology.kubernetes.io/zone': zone,
        'eks.amazonaws.com/nodegroup': `workers-${i % 8}`,
        'eks.amazonaws.com/capacityType': i % 3 ? 'ON_DEMAND' : 'SPOT',
        'topology.ebs.csi.aws.com/zone': zone,
        ...(verdict === undefined ? {} : { [NODE_VERIFIED_LABEL]: verdict }),
      },
      annotations: {
        'alpha.kubernetes.io/provided-node-ip': `10.${(i >> 8) & 255}.${i & 255}.10`,
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({
          'ebs.csi.aws.com': `i-0${((i * 2654435761) >>> 0).toString(16).padStart(16, '0')}`,
        }),
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        ...(verdict === undefined ? {} : { [NODE_EVIDENCE_ANNOTATION]: evidence }),
      },
      managedFields: [
        managedField('kubelet', 'Update'),
        managedField('kubelet', 'Update', 'status'),
        managedField('meshgate-node-agent', 'Apply', 'status'),
      ],
    },
    spec: {
      podCIDR: `100.${(i >> 8) & 255}.${i & 255}.0/24`,
      podCIDRs: [`100.${(i >> 8) & 255}.${i & 255}.0/24`],
      providerID: `aws:///${zone}/i-0${i.toString(16).padStart(16, '0')}`,
      ...(verdict === 'false' ? { taints: [{ key: 'meshgate.io/cni-unverified', effect: 'NoSchedule' }] } : {}),
    },
    status: {
      capacity: {
        cpu: '8',
        'ephemeral-storage': '104845292Ki',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: '32386268Ki',
        pods: '58',
      },
      allocatable: {
        cpu: '7910m',
        'ephemeral-storage': '95551679124',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: '31369436Ki',
        pods: '58',
      },
      conditions: [
        condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
        ...meshCondition,
      ],
      addresses: [
        { type: 'InternalIP', address: `10.${(i >> 8) & 255}.${i & 255}.10` },
        { type: 'InternalDNS', address: name },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: `ec2${i.toString(16).padStart(29, '0')}`,
        systemUUID: `ec2${i.toString(16).padStart(5, '0')}-aaaa-bbbb-cccc-dddddddddddd`,
        bootID: `b00t${i.toString(16).padStart(4, '0')}-0000-4000-8000-000000000000`,
        kernelVersion: '6.1.112-124.190.amzn2023.x86_64',
        osImage: 'Amazon Linux 2023.6.20241010',
        containerRuntimeVersion: 'containerd://1.7.22',
        kubeletVersion: kubelet,
        kubeProxyVersion: kubelet,
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images: Array.from({ length: 12 + (i % 16) }, (_, n) => image(i, n)),
    },
  };
}
kubeletNode.nameOf = nameOf;
