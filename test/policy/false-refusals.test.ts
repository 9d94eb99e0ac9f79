/**
 * Issue 31 §1: legitimate shapes the meshes' own code writes, which meshgate refused, each read from that code (the
 * comment on each row names where) and admitted now — and, beside each, the neighbouring shape that stays refused,
 * so the rule was widened by exactly what the mesh writes. Bases: the injectors' own outputs in shared/corpus (Istio
 * 1.27's native-sidecar hello.yaml.injected, Linkerd's inject_emojivoto_pod.golden.yaml); the legacy gateway chart
 * and the OpenShift injection are judged from the real renders in test/corpus/data and test/config/per-namespace.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/mutate/decide.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import { cfg, input, verified } from './mutate/fixtures.ts';
import {
  containerNamed as named,
  istioInjected as istioBase,
  linkerdInjected as linkerdBase,
} from '../support/corpus.ts';
import { loadCorpus } from '../corpus/load.ts';

const annotate = (p: Pod, a: Record<string, string>) => {
  p.metadata = { ...p.metadata, annotations: { ...(p.metadata?.annotations ?? {}), ...a } };
};
/** istio-proxy's mounts, as the tests edit them. */
const mountsOf = (p: Pod) => named(p, 'istio-proxy').volumeMounts as Array<Record<string, unknown>>;
/** The pod's workload-socket as a CSI volume of `driver` (SPIRE's is csi.spiffe.io), instead of an emptyDir. */
function spiffeSocket(p: Pod, driver = 'csi.spiffe.io'): Pod {
  const v = p.spec.volumes!.find((x) => x.name === 'workload-socket') as Record<string, unknown>;
  delete v.emptyDir;
  v.csi = driver === 'csi.spiffe.io' ? { driver, readOnly: true } : { driver };
  return p;
}
const setEnv = (c: Container, name: string, value: string) => {
  c.env = [...(c.env ?? []).filter((e) => e.name !== name), { name, value }];
};

type Mesh = 'istio' | 'linkerd';
function judged(mesh: Mesh, p: Pod, over: Record<string, unknown> = {}) {
  const c = cfg(mesh, over);
  const posture = checkPosture(input(p), verified, c);
  const decision = decide(input(p), verified, c);
  return {
    posture: posture.ok ? 'ok' : `${posture.reason}: ${posture.message}`,
    decision: decision.kind === 'deny' ? `${decision.reason}: ${decision.message}` : decision.kind,
  };
}

/** [case (with where the mesh writes it), mesh, make] — admitted now. */
const admitted: Array<[string, Mesh, () => Pod]> = [
  [
    "Istio's drain hook on the pod's status port (injection-template.yaml: --debug-port=<status.sidecar.istio.io/port>)",
    'istio',
    () => {
      const p = istioBase();
      annotate(p, { 'status.sidecar.istio.io/port': '15099' });
      named(p, 'istio-proxy').lifecycle = {
        preStop: { exec: { command: ['pilot-agent', 'request', '--debug-port=15099', 'POST', 'drain'] } },
      };
      return p;
    },
  ],
  [
    "Istio's SPIRE template: workload-socket a csi.spiffe.io volume (testdata/inject/sidecar-spire.yaml.injected)",
    'istio',
    () => {
      const p = spiffeSocket(istioBase());
      mountsOf(p).find((x) => x.name === 'workload-socket')!.readOnly = true;
      return p;
    },
  ],
  [
    "SPIRE's documented template mounts it at /run/secrets/workload-spiffe-uds (samples/security/spire)",
    'istio',
    () => {
      const p = spiffeSocket(istioBase());
      mountsOf(p).push({
        name: 'workload-socket',
        mountPath: '/run/secrets/workload-spiffe-uds',
        readOnly: true,
      });
      return p;
    },
  ],
  [
    "Linkerd copies the app's capabilities onto linkerd-init (pkg/inject injectProxyInit): ingress-nginx's controller",
    'linkerd',
    () => {
      const p = linkerdBase();
      const app = p.spec.containers.find((c) => c.name !== 'linkerd-proxy')!;
      app.securityContext = { runAsUser: 101, capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] } };
      named(p, 'linkerd-proxy').securityContext!.capabilities = { add: ['NET_BIND_SERVICE'], drop: ['ALL'] };
      named(p, 'linkerd-init').securityContext!.capabilities = {
        add: ['NET_ADMIN', 'NET_RAW', 'NET_BIND_SERVICE'],
        drop: ['ALL'],
      };
      return p;
    },
  ],
  [
    "Linkerd copies the app's drops without NET_ADMIN and NET_RAW (the init needs them)",
    'linkerd',
    () => {
      const p = linkerdBase();
      const app = p.spec.containers.find((c) => c.name !== 'linkerd-proxy')!;
      app.securityContext = { capabilities: { drop: ['NET_RAW', 'MKNOD'] } };
      named(p, 'linkerd-init').securityContext!.capabilities = { add: ['NET_ADMIN', 'NET_RAW'], drop: ['MKNOD'] };
      return p;
    },
  ],
];

describe('shapes the meshes write are admitted', () => {
  it.each(admitted)('%s', (_n, mesh, make) => {
    expect(judged(mesh, make())).toEqual({ posture: 'ok', decision: 'patch' });
  });
});

/** [case, mesh, make, the refusal] — the neighbours of each widened rule, still refused. */
const refused: Array<[string, Mesh, () => Pod, RegExp]> = [
  [
    'the drain hook with a port that is no number',
    'istio',
    () => {
      const p = istioBase();
      named(p, 'istio-proxy').lifecycle = {
        preStop: { exec: { command: ['pilot-agent', 'request', '--debug-port=15020;x', 'POST', 'drain'] } },
      };
      return p;
    },
    /impostor_container: .*preStop runs/,
  ],
  [
    'the drain hook with a port past 65535',
    'istio',
    () => {
      const p = istioBase();
      named(p, 'istio-proxy').lifecycle = {
        preStop: { exec: { command: ['pilot-agent', 'request', '--debug-port=65536', 'POST', 'drain'] } },
      };
      return p;
    },
    /impostor_container/,
  ],
  [
    'workload-socket from another CSI driver (an identity server the pod chose)',
    'istio',
    () => {
      return spiffeSocket(istioBase(), 'evil.example.com');
    },
    /impostor_container: .*workload-socket .*neither an emptyDir nor the SPIFFE CSI driver's volume/,
  ],
  [
    "linkerd-init with a capability the app's first container does not carry",
    'linkerd',
    () => {
      const p = linkerdBase();
      named(p, 'linkerd-init').securityContext!.capabilities = { add: ['NET_ADMIN', 'NET_RAW', 'SYS_PTRACE'] };
      return p;
    },
    /impostor_container: .*linkerd-init/,
  ],
  [
    'an app adding NET_ADMIN, which Linkerd would copy onto linkerd-init',
    'linkerd',
    () => {
      const p = linkerdBase();
      const app = p.spec.containers.find((c) => c.name !== 'linkerd-proxy')!;
      app.securityContext = { capabilities: { add: ['NET_ADMIN'] } };
      named(p, 'linkerd-init').securityContext!.capabilities = { add: ['NET_ADMIN', 'NET_RAW', 'NET_ADMIN'] };
      return p;
    },
    /redirect_tamper: container .* adds capability NET_ADMIN/,
  ],
];

describe('their neighbours stay refused', () => {
  it.each(refused)('%s', (_n, mesh, make, refusal) => {
    const r = judged(mesh, make());
    expect(r.posture).toMatch(refusal);
    expect(r.decision).toMatch(/^[a-z_]+: /);
  });
});

/** Istio's ways of running the proxy without a redirect: their own codes, and the opt-out setting decides. */
describe("Istio's proxyless gRPC and interception mode NONE are opt-outs", () => {
  const proxyless = () => {
    // grpc-agent.yaml: istio-proxy with DISABLE_ENVOY=true, no init container.
    const p = istioBase();
    annotate(p, { 'inject.istio.io/templates': 'grpc-agent' });
    p.spec.initContainers = p.spec.initContainers!.filter((c) => c.name !== 'istio-init');
    setEnv(named(p, 'istio-proxy'), 'DISABLE_ENVOY', 'true');
    return p;
  };
  const envoyOff = () => {
    const p = istioBase();
    setEnv(named(p, 'istio-proxy'), 'DISABLE_ENVOY', 'True');
    return p;
  };
  const none = () => {
    const p = istioBase();
    annotate(p, { 'sidecar.istio.io/interceptionMode': 'NONE' });
    p.spec.initContainers = p.spec.initContainers!.filter((c) => c.name !== 'istio-init');
    return p;
  };
  const meshNone = () => {
    const p = istioBase();
    p.spec.initContainers = p.spec.initContainers!.filter((c) => c.name !== 'istio-init');
    setEnv(named(p, 'istio-proxy'), 'ISTIO_META_INTERCEPTION_MODE', 'NONE');
    return p;
  };
  const rows: Array<[string, () => Pod, 'proxyless_grpc' | 'interception_none', RegExp]> = [
    ['proxyless gRPC (inject.istio.io/templates: grpc-agent)', proxyless, 'proxyless_grpc', /templates=grpc-agent/],
    ['a proxy with Envoy switched off however it came', envoyOff, 'proxyless_grpc', /DISABLE_ENVOY=True/],
    ['sidecar.istio.io/interceptionMode: NONE', none, 'interception_none', /interceptionMode=NONE/],
    ["the mesh's default interception mode NONE", meshNone, 'interception_none', /ISTIO_META_INTERCEPTION_MODE=NONE/],
  ];
  it.each(rows)('%s: refused with its own code while opt-outs are not allowed', (_n, make, code, what) => {
    const r = judged('istio', make());
    expect(r.posture).toMatch(new RegExp(`^${code}: the pod sets `));
    expect(r.posture).toMatch(what);
    expect(r.decision).toMatch(new RegExp(`^${code}: `));
  });
  it.each(rows)('%s: admitted untouched where injection.allowPodOptOut is true', (_n, make, code) => {
    const c = cfg('istio', { injection: { allowPodOptOut: true } });
    expect(checkPosture(input(make()), verified, c)).toMatchObject({ ok: true, reason: `${code}_allowed` });
    expect(decide(input(make()), verified, c)).toMatchObject({ kind: 'skip', reason: `${code}_allowed` });
  });
  it('interception modes that redirect are no opt-out', () => {
    const p = istioBase();
    annotate(p, { 'sidecar.istio.io/interceptionMode': 'REDIRECT' });
    expect(judged('istio', p)).toEqual({ posture: 'ok', decision: 'patch' });
  });
});

/**
 * Istio's legacy istio-ingress chart (istioctl/IstioOperator, empty injectionTemplate): the gateway its chart writes,
 * as rendered by helm and stored by the apiserver in the corpus (test/corpus/data/istio-ingress-legacy).
 */
describe("Istio's legacy gateway chart", () => {
  const rendered = loadCorpus().find((p) => p.source === 'istio-ingress-legacy' && p.mesh === 'istio')!.pod;
  const legacy = (): Pod => structuredClone(rendered) as unknown as Pod;
  const vol = (p: Pod, name: string) => p.spec.volumes!.find((v) => v.name === name) as Record<string, unknown>;
  const gatewayJudged = (p: Pod) => {
    const c = cfg('istio');
    const posture = checkPosture(input(p, 'gateways'), verified, c);
    return posture.ok ? `ok (${posture.reason})` : `${posture.reason}: ${posture.message}`;
  };

  it('is admitted as the mesh gateway it is', () => {
    expect(gatewayJudged(legacy())).toBe('ok (mesh_gateway)');
  });

  const neighbours: Array<[string, (p: Pod) => void, RegExp]> = [
    [
      'the mesh configuration from another ConfigMap',
      (p) => Object.assign(vol(p, 'config-volume'), { configMap: { name: 'mine' } }),
      /config-volume .*not the ConfigMap istio\[-<revision>\]/,
    ],
    [
      'a certificate volume from the host',
      (p) => {
        const v = vol(p, 'ingressgateway-certs');
        delete v.secret;
        v.hostPath = { path: '/etc' };
      },
      /ingressgateway-certs .*not a Secret of the gateway/,
    ],
    [
      'istio-envoy from a ConfigMap (a bootstrap the pod supplies)',
      (p) => {
        const v = vol(p, 'istio-envoy');
        delete v.emptyDir;
        v.configMap = { name: 'bootstrap' };
      },
      /istio-envoy .*not an emptyDir/,
    ],
    ['an app beside the gateway', (p) => p.spec.containers.push({ name: 'app', image: 'nginx' }), /^gateway_shared: /],
  ];
  it.each(neighbours)('%s is refused', (_n, edit, refusal) => {
    const p = legacy();
    edit(p);
    expect(gatewayJudged(p)).toMatch(refusal);
  });
});
