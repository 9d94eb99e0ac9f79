/**
 * Istio 1.27's own injector test outputs (pkg/kube/inject/testdata/inject/*.yaml.injected, read from the module cache:
 * test/corpus/istio-testdata.ts), each pod through meshgate's webhooks at enforce with its defaults (issue 31 §3). The
 * installation they were rendered for is recognised as meshgate recognises any: its hub (gcr.io/istio-testing, the
 * testdata's values) among the proxy images, as config.learnImages learns it from istio-sidecar-injector; the
 * OpenShift outputs judged with their namespace's IDs (inject_test.go gives it uid-range 1000620000/10000). Every
 * refusal is listed below with its reason; any other fails, and so does a listed one that no longer happens.
 */
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import { compileConfig, type Compiled } from '../../src/config/compile.ts';
import { withLearned } from '../../src/config/learned.ts';
import { withProxyIds } from '../../src/config/per-namespace.ts';
import { istioOpenShiftProxyIds } from '../../src/mesh/istio-openshift.ts';
import { istioTestdataPods } from './istio-testdata.ts';
import { judgePod, type Judged } from './judge.ts';

const HUB = ['docker.io/istio/proxyv2', 'gcr.io/istio-release/proxyv2', 'gcr.io/istio-testing/proxyv2'];
/**
 * The injector settings inject_test.go renders a case with that meshgate learns from istio-sidecar-injector
 * (src/mesh/control-plane.ts): hello-mount-mtls-certs is rendered with values.global.mountMtlsCerts=true.
 */
const learned = (name: string) =>
  name.startsWith('hello-mount-mtls-certs')
    ? { images: { proxy: [], init: [], validator: [] }, controlPlane: { mountMtlsCerts: true } }
    : undefined;

const config = (privileges: 'node' | 'restricted', openshift: boolean, name = ''): Compiled => {
  const l = learned(name);
  if (l) return withLearned(config(privileges, openshift), l);
  const c = compileConfig(
    buildConfig({
      mesh: 'istio',
      apps: { privileges },
      recognisedImages: { proxy: HUB, init: HUB, validator: HUB },
      ...(openshift ? { proxy: { idsFrom: 'openshift' } } : {}),
    }),
  );
  if (!openshift) return c;
  const ns = {
    'openshift.io/sa.scc.uid-range': '1000620000/10000',
    'openshift.io/sa.scc.supplemental-groups': '1000620000/10000',
  };
  return withProxyIds(c, istioOpenShiftProxyIds(ns));
};

/** file → [reason, why it is right to refuse]. */
const REFUSED: Readonly<Record<string, readonly [string, string]>> = {
  'custom-template.yaml.injected#0': ['proxy_missing', 'its custom template injects no proxy: the pod runs unmeshed'],
  'gateway-with-default-container.yaml.injected#0': [
    'gateway_shared',
    'an app container beside a gateway proxy: nothing redirects the app',
  ],
  'grpc-agent.yaml.injected#0': [
    'proxyless_grpc',
    'proxyless gRPC redirects nothing: an opt-out, refused while opt-outs are',
  ],
  'grpc-simple.yaml.injected#0': [
    'proxyless_grpc',
    'proxyless gRPC redirects nothing: an opt-out, refused while opt-outs are',
  ],
  'hello-host-network-with-ns.yaml.injected#0': ['host_network', 'the host network cannot be redirected'],
  'hello-host-network.yaml.injected#0': ['host_network', 'the host network cannot be redirected'],
  'hello-ignore.yaml.injected#0': ['opt_out_refused', 'sidecar.istio.io/inject: "false": an opt-out'],
  'init-no-intercept-no-native-sidecar.yaml.injected#0': [
    'interception_none',
    'interception mode NONE redirects nothing: an opt-out',
  ],
  'hello-openshift-custom-injection.yaml.injected#0': [
    'impostor_container',
    "the pod's own istio-proxy entry sets readOnlyRootFilesystem: false: an override that loosens the proxy's " +
      'security context (the contract takes only tightening ones)',
  ],
  'hello-openshift-tproxy.yaml.injected#0': [
    'impostor_container',
    'TPROXY interception runs the proxy as root with NET_ADMIN, exempt by GID; meshgate accepts REDIRECT only',
  ],
  'hello-tproxy.yaml.injected#0': ['impostor_container', 'TPROXY (as above)'],
  'proxy-override-runas.yaml.tproxy.injected#0': ['impostor_container', 'TPROXY (as above)'],
  'hello-proxy-override.yaml.injected#0': [
    'impostor_container',
    'sidecar.istio.io/proxyImage: the pod chooses the image the proxy and init container run',
  ],
  'hello.yaml.proxyImageName.injected#0': ['impostor_container', 'the pod chooses the proxy image (as above)'],
  'proxy-override.yaml.injected#0': ['impostor_container', 'the pod chooses the proxy image (as above)'],
  'multiple-templates.yaml.injected#0': ['impostor_container', 'the pod chooses the proxy image (as above)'],
  'proxy-override-args.yaml.injected#0': [
    'impostor_container',
    "the pod replaces the proxy's arguments (-c my-config.yaml): Envoy runs a configuration the pod supplies",
  ],
  'proxy-override-args-native.yaml.injected#0': [
    'impostor_container',
    "the pod replaces the proxy's arguments (as above)",
  ],
  'proxy-override-runas.yaml.injected#0': [
    'impostor_container',
    "the pod sets istio-proxy's runAsUser 1234: the proxy runs as another UID than the one the redirect exempts",
  ],
  'proxy-override-runas.yaml.cni.injected#0': [
    'impostor_container',
    'the same with istio-cni: its validation runs as 1234',
  ],
  'sidecar-spire.yaml.injected#0': [
    'impostor_container',
    "the spire template's containers entry merged beside a native-sidecar proxy leaves an istio-proxy container " +
      'without an image (the apiserver refuses it too)',
  ],
  'traffic-annotations.yaml.injected#0': [
    'impostor_container',
    'proxy.istio.io/config sets discoveryAddress foo:123: the proxy would take its configuration from another control plane',
  ],
  'traffic-annotations-empty-includes.yaml.injected#0': [
    'redirect_narrowed',
    'includeOutboundIPRanges and includeInboundPorts "": nothing would be redirected',
  ],
  'kubevirtInterfaces.yaml.injected#0': [
    'redirect_narrowed',
    'kubevirtInterfaces "net1": what arrives on a Multus interface would leave through the proxy with the pod\'s identity',
  ],
  'kubevirtInterfaces_list.yaml.injected#0': ['redirect_narrowed', 'kubevirtInterfaces with net1 (as above)'],
  'traffic-params.yaml.injected#0': [
    'redirect_narrowed',
    'istio-init -i 127.0.0.1/24,10.96.0.1/24: only those destinations',
  ],
};

const pods = istioTestdataPods();
const judged = (privileges: 'node' | 'restricted') =>
  pods.map((p) => ({
    name: p.name,
    j: judgePod(p.pod, p.namespace, config(privileges, p.name.startsWith('hello-openshift'), p.name)),
  }));
const outcome = (j: Judged) => (j.admitted ? 'admitted' : j.reason);

describe("Istio 1.27's own injector test outputs at enforce", () => {
  const node = judged('node');
  it('are all there (the module holds ~110 outputs)', () => {
    expect(pods.length).toBeGreaterThanOrEqual(100);
  });

  it('are admitted under the default but for the listed refusals, each for its listed reason', () => {
    const got = Object.fromEntries(node.filter((r) => !r.j.admitted).map((r) => [r.name, outcome(r.j)]));
    const want = Object.fromEntries(Object.entries(REFUSED).map(([f, [reason]]) => [f, reason]));
    expect(got).toEqual(want);
  });

  it('prints how many pass under the default and under restricted', () => {
    const restricted = judged('restricted');
    const count = (r: typeof node) => r.filter((x) => x.j.admitted).length;
    process.stdout.write(
      `istio testdata: admitted ${count(node)}/${pods.length} under apps.privileges node (default), ` +
        `${count(restricted)}/${pods.length} under restricted\n`,
    );
    expect(count(node)).toBe(pods.length - Object.keys(REFUSED).length);
  });
});
