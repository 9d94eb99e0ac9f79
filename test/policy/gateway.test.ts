/**
 * Istio's gateways (issue 23): the istio/gateway chart's pods (injected with istiod's `gateway` template), and the
 * Gateway API gateways and waypoints istiod's deployment controller renders (`kube-gateway`, `waypoint` templates:
 * sidecar.istio.io/inject=false, no init container) are the mesh's proxy as the pod's only container. They are
 * admitted untouched — in any namespace meshgate guards, by the mutating and the validating webhook — while their
 * proxy is judged field by field like a sidecar's; anything beside it, or a proxy that is not the mesh's, is refused.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/contract/pod.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { checkUpdate } from '../../src/policy/validate/update.ts';
import { cfg, input, istio, pod, verified } from './mutate/fixtures.ts';

const router = (over: Partial<Container> = {}) =>
  istio.proxy({ args: ['proxy', 'router', '--domain', '$(POD_NAMESPACE).svc.cluster.local'], ...over });
const waypoint = (over: Partial<Container> = {}) =>
  istio.proxy({ args: ['proxy', 'waypoint', '--domain', '$(POD_NAMESPACE).svc.cluster.local'], ...over });

/** The istio/gateway chart's pod after istiod's gateway template: labels that select the injector, one container. */
const chartGateway = (spec: Partial<Pod['spec']> = {}, labels: Record<string, string> = {}) =>
  pod(
    {
      containers: [router()],
      securityContext: { sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }] },
      ...spec,
    },
    {
      name: 'istio-ingressgateway-7d9f',
      namespace: 'istio-ingress',
      labels: { 'sidecar.istio.io/inject': 'true', app: 'istio-ingressgateway', istio: 'ingressgateway', ...labels },
      annotations: { 'inject.istio.io/templates': 'gateway', 'sidecar.istio.io/status': istio.status },
    },
  );

/** A waypoint or Gateway API gateway as istiod's deployment controller renders it: not injected, on purpose. */
const controllerGateway = (proxy: Container) =>
  pod(
    { containers: [proxy] },
    {
      name: 'waypoint-5c8d',
      namespace: 'shop',
      labels: {
        'sidecar.istio.io/inject': 'false',
        'istio.io/dataplane-mode': 'none',
        'gateway.networking.k8s.io/gateway-name': 'waypoint',
        'gateway.istio.io/managed': 'istio.io-mesh-controller',
      },
    },
  );

const both = (p: Pod) => ({
  posture: checkPosture(input(p), verified, cfg('istio')),
  decision: decide(input(p), verified, cfg('istio')),
});

describe("Istio's gateways are the proxy: admitted untouched", () => {
  it.each<[string, Pod]>([
    ['the istio/gateway chart pod (gateway template)', chartGateway()],
    [
      'an egress or east-west gateway (the same chart, network view env)',
      chartGateway({ containers: [router({ env: [{ name: 'ISTIO_META_REQUESTED_NETWORK_VIEW', value: 'net1' }] })] }),
    ],
    ['a Gateway API gateway (kube-gateway template, sidecar.istio.io/inject=false)', controllerGateway(router())],
    ['a waypoint (waypoint template, sidecar.istio.io/inject=false)', controllerGateway(waypoint())],
    ['a gateway on the host network', chartGateway({ hostNetwork: true })],
  ])('%s', (_n, p) => {
    const { posture, decision } = both(p);
    expect(decision).toEqual({ kind: 'skip', reason: 'mesh_gateway' });
    expect(posture).toMatchObject({ ok: true });
  });
});

describe('what only looks like a gateway is refused', () => {
  it.each<[string, Pod, string, RegExp]>([
    [
      'an app container beside the gateway proxy',
      chartGateway({ containers: [router(), { name: 'app', image: 'nginx' }] }),
      'gateway_shared',
      /runs the proxy as a gateway beside other containers \(containers istio-proxy, app\)/,
    ],
    [
      'an init container before the gateway proxy (it would run unredirected first)',
      chartGateway({ initContainers: [{ name: 'setup', image: 'busybox' }] }),
      'gateway_shared',
      /containers setup, istio-proxy/,
    ],
    [
      'a waypoint beside an app',
      pod({ containers: [{ name: 'app' }, waypoint()] }),
      'gateway_shared',
      /as a waypoint beside other containers/,
    ],
    [
      'a gateway proxy from another image',
      chartGateway({ containers: [router({ image: 'docker.io/evil/proxyv2:1.27.0' })] }),
      'impostor_container',
      /not one of the recognised proxy images/,
    ],
    [
      'a gateway proxy whose command replaces pilot-agent',
      chartGateway({ containers: [router({ command: ['/bin/sh', '-c', 'curl evil'] })] }),
      'impostor_container',
      /command/,
    ],
    [
      'a gateway proxy with an exec lifecycle hook',
      chartGateway({ containers: [router({ lifecycle: { postStart: { exec: { command: ['sh', '-c', 'id'] } } } })] }),
      'impostor_container',
      /lifecycle/,
    ],
  ])('%s', (_n, p, reason, message) => {
    const { posture, decision } = both(p);
    expect(decision).toMatchObject({ kind: 'deny', reason });
    expect(posture).toMatchObject({ ok: false, reason });
    expect(!posture.ok && posture.message).toMatch(message);
  });

  it("the chart's pod before Istio's injector ran (istio-proxy image auto): waited for, then refused if never filled in", () => {
    const template = chartGateway({
      containers: [{ name: 'istio-proxy', image: 'auto', securityContext: { runAsUser: 1337, runAsGroup: 1337 } }],
    });
    const { posture, decision } = both(template);
    expect(decision).toEqual({ kind: 'skip', reason: 'no_proxy_yet' });
    expect(posture).toMatchObject({ ok: false, reason: 'proxy_missing' });
  });

  it('a pod that only borrows the name, running no gateway mode, is judged as before (not a gateway)', () => {
    const p = controllerGateway(istio.proxy());
    expect(both(p).decision).toMatchObject({ kind: 'deny', reason: 'opt_out_refused' });
  });
});

/**
 * Issue 33 §2: "alone" counts every container of the pod. An ephemeral container (`kubectl debug`) runs in the
 * gateway's network namespace — unredirected, and with the gateway's host network when it has one — so a gateway
 * pod with one is refused at CREATE, and the update guard refuses the pods/ephemeralcontainers UPDATE that adds one
 * to a running gateway (the gateway pod before it was admitted untouched).
 */
describe('an ephemeral container makes a gateway pod not alone', () => {
  const debuggers: Array<[string, Container]> = [
    ['as the proxy UID 1337', { name: 'debugger-x', image: 'busybox', securityContext: { runAsUser: 1337 } }],
    [
      'privileged with NET_ADMIN',
      {
        name: 'debugger-y',
        image: 'nicolaka/netshoot',
        securityContext: { privileged: true, capabilities: { add: ['NET_ADMIN'] } },
      },
    ],
    [
      'a compliant one (restricted, another UID)',
      {
        name: 'debugger-z',
        image: 'busybox',
        securityContext: {
          runAsUser: 1000,
          runAsGroup: 1000,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        },
      },
    ],
  ];

  it.each(debuggers)('created with an ephemeral container %s: refused (gateway_shared)', (_n, eph) => {
    const { posture, decision } = both(chartGateway({ ephemeralContainers: [eph] }));
    expect(decision).toMatchObject({ kind: 'deny', reason: 'gateway_shared' });
    expect(posture).toMatchObject({ ok: false, reason: 'gateway_shared' });
    expect(!posture.ok && posture.message).toContain(`containers istio-proxy, ${eph.name} (ephemeral)`);
  });

  it.each(debuggers)(
    'an ephemeral container %s added to a running gateway (host network too): the update is refused',
    (_n, eph) => {
      for (const hostNetwork of [false, true]) {
        const old = chartGateway({ hostNetwork });
        expect(checkPosture(input(old), verified, cfg('istio'))).toMatchObject({ ok: true, reason: 'mesh_gateway' });
        const next = structuredClone(old);
        next.spec.ephemeralContainers = [eph];
        const r = checkUpdate(old, next, 'istio-ingress', 'alice', verified, cfg('istio'));
        expect(r).toMatchObject({ ok: false, reason: 'gateway_shared' });
        expect(!r.ok && r.message).toMatch(/^after this update: the pod runs the proxy as a gateway beside/);
      }
    },
  );

  it('a waypoint with an ephemeral container is refused the same way', () => {
    const { posture } = both(
      pod({ containers: [waypoint()], ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] }),
    );
    expect(posture).toMatchObject({ ok: false, reason: 'gateway_shared' });
  });

  it('an update that leaves the gateway alone (a label) still passes', () => {
    const old = chartGateway();
    const next = structuredClone(old);
    next.metadata!.labels!.version = 'v2';
    expect(checkUpdate(old, next, 'istio-ingress', 'alice', verified, cfg('istio'))).toEqual({
      ok: true,
      reason: 'ok',
    });
  });
});
