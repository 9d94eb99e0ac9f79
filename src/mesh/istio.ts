/**
 * Istio (sidecar mode), as its injector (istiod, manifests/charts/istio-control/istio-discovery injection template)
 * and its CNI plugin (cni/pkg/plugin) shape and read pods at Istio 1.27: istio-proxy runs as 1337 with
 * `proxy sidecar`; istio-init runs `pilot-agent istio-iptables` as root with NET_ADMIN and NET_RAW; with the CNI
 * plugin, istio-validation runs the same binary with --run-validation as the proxy UID. The CNI plugin redirects a
 * pod only when it has istio-proxy, the sidecar.istio.io/status annotation and no istio-init, and takes the
 * exemptions from the pod's traffic.sidecar.istio.io/* annotations.
 */
import { type Container, everyContainer, type Pod } from '../contract/pod.ts';
import { addedCapabilities } from '../pod/security.ts';
import { fromRepositories } from './images.ts';
import { isIstioInjectorConfigMap, istioInjectorImages } from './learn.ts';
import { goBool } from './flags.ts';
import { readIstioIptables, type IstioIptables } from './istio-iptables.ts';
import { REROUTE_ANNOTATIONS, rerouteProblem } from './reroute-interfaces.ts';
import { ISTIO_TEMPLATES, redirectOptOut } from './istio-opt-outs.ts';
import { ISTIO_STATUS, istioStatusOps } from './istio-status.ts';

export { ISTIO_STATUS } from './istio-status.ts';
import {
  addCidrs,
  addPortRanges,
  emptySettings,
  type MeshIdentity,
  type MeshProfile,
  type Problem,
  type RedirectSettings,
} from './types.ts';

const INJECT = 'sidecar.istio.io/inject';
const TRAFFIC = 'traffic.sidecar.istio.io';

/** istio-init's image runs pilot-agent; a command that replaces it runs something else. */
const PILOT_AGENT = [undefined, 'pilot-agent', '/usr/local/bin/pilot-agent'];

/**
 * How istiod 1.27 reads the switch (pkg/kube/inject/inject.go injectRequired): the label beats the annotation, and
 * only "false" opts out; any other value falls back to the namespace's policy, which injects the pods meshgate sees.
 */
function injectSwitch(pod: Pod): string | undefined {
  const label = pod.metadata?.labels?.[INJECT];
  const value = label ?? pod.metadata?.annotations?.[INJECT];
  if (value !== 'false') return undefined;
  return `${label !== undefined ? 'label' : 'annotation'} ${INJECT}=${value}`;
}

/**
 * How istio-cni reads the switch (cni/pkg/plugin/plugin.go): the label, else the annotation, with strconv.ParseBool;
 * any value that parses as false makes it skip the pod, of which istiod reads only "false" (injectSwitch): with
 * "0", "F" or "False" istiod injects and istio-cni skips, so such a pod keeps its istio-init.
 */
function cniInjectOff(pod: Pod): string | undefined {
  const label = pod.metadata?.labels?.[INJECT];
  const value = label ?? pod.metadata?.annotations?.[INJECT];
  if (goBool(value) !== false) return undefined;
  return `${label !== undefined ? 'label' : 'annotation'} ${INJECT}=${value}`;
}

/** The pilot-agent modes of a proxy that is the pod's workload: gateways (`router`) and waypoints (`waypoint`). */
const GATEWAY_MODES: readonly string[] = ['router', 'waypoint'];

/**
 * Istio's gateways as istiod's templates make them (research: the `gateway` injection template of the istio/gateway
 * chart's pods, the `kube-gateway` and `waypoint` templates of its deployment controller): one container,
 * istio-proxy, running `proxy router` or `proxy waypoint`, and no init container (none of the three has one).
 * "Alone" counts every container of the pod, ephemeral ones included: one added later by `kubectl debug` runs in
 * the gateway's network namespace, unredirected, and the update guard judges the pod it makes (issue 33 §2).
 */
export function istioGateway(pod: Pod): { kind: string; alone: boolean } | undefined {
  const proxy = pod.spec.containers.find((c) => c.name === 'istio-proxy');
  const mode = proxy?.args?.[0] === 'proxy' ? proxy.args[1] : undefined;
  if (mode === undefined || !GATEWAY_MODES.includes(mode)) return undefined;
  const alone = everyContainer(pod).length === 1;
  return { kind: mode === 'router' ? 'gateway' : 'waypoint', alone };
}

/** "everything" or absent: any other value narrows the redirect to a subset. */
function mustBeAll(s: RedirectSettings, where: string, value: string | undefined, what: string): void {
  if (value !== undefined && value.trim() !== '*')
    s.narrowing.push(`${where} is "${value}": only ${what} listed there would be redirected (must be "*")`);
}

function annotationSettings(a: Readonly<Record<string, string>>): RedirectSettings {
  const s = emptySettings();
  const key = (k: string) => `annotation ${TRAFFIC}/${k}`;
  addCidrs(s, key('excludeOutboundIPRanges'), a[`${TRAFFIC}/excludeOutboundIPRanges`]);
  addPortRanges(s, key('excludeOutboundPorts'), a[`${TRAFFIC}/excludeOutboundPorts`], 'outboundPorts');
  addPortRanges(s, key('excludeInboundPorts'), a[`${TRAFFIC}/excludeInboundPorts`], 'inboundPorts');
  mustBeAll(s, key('includeOutboundIPRanges'), a[`${TRAFFIC}/includeOutboundIPRanges`], 'destinations');
  mustBeAll(s, key('includeInboundPorts'), a[`${TRAFFIC}/includeInboundPorts`], 'inbound ports');
  const excludeInterfaces = a[`${TRAFFIC}/excludeInterfaces`];
  if (excludeInterfaces !== undefined && excludeInterfaces.trim() !== '') {
    s.narrowing.push(
      `${key('excludeInterfaces')} is "${excludeInterfaces}": traffic on those interfaces would bypass the proxy`,
    );
  }
  for (const k of REROUTE_ANNOTATIONS) {
    const reroute = rerouteProblem(`annotation ${k}`, a[k]);
    if (reroute) s.narrowing.push(reroute);
  }
  const mode = a['sidecar.istio.io/interceptionMode'];
  if (mode !== undefined && mode !== 'REDIRECT' && mode !== 'TPROXY') {
    s.narrowing.push(
      `annotation sidecar.istio.io/interceptionMode is "${mode}": only REDIRECT and TPROXY redirect traffic`,
    );
  }
  return s;
}

/** The exemptions istio-iptables' effective flags ask for, and any setting that narrows or disables it. */
function iptablesSettings(t: IstioIptables, id: MeshIdentity, who: string): RedirectSettings {
  const s = emptySettings();
  const flag = (name: string, short: string) => `${who} -${short} (--${name})`;
  addCidrs(s, flag('istio-service-exclude-cidr', 'x'), t.get('istio-service-exclude-cidr'));
  addPortRanges(
    s,
    flag('istio-local-outbound-ports-exclude', 'o'),
    t.get('istio-local-outbound-ports-exclude'),
    'outboundPorts',
  );
  addPortRanges(s, flag('istio-local-exclude-ports', 'd'), t.get('istio-local-exclude-ports'), 'inboundPorts');
  const must = (name: string, short: string, want: string, why: string) => {
    const v = t.get(name) ?? '';
    if (v.trim() !== want) s.narrowing.push(`${flag(name, short)} is "${v}": ${why} (must be "${want}")`);
  };
  must('istio-service-cidr', 'i', '*', 'only those destinations would be redirected');
  must('istio-inbound-ports', 'b', '*', 'only those inbound ports would be redirected');
  must(
    'envoy-port',
    'p',
    String(id.outboundPort),
    'outbound traffic would go to another port than the proxy listens on',
  );
  must(
    'inbound-capture-port',
    'z',
    String(id.inboundPort),
    'inbound traffic would go to another port than the proxy listens on',
  );
  const uids = (t.get('proxy-uid') || String(id.proxyUid)).split(',');
  if (!uids.every((u) => u.trim() === String(id.proxyUid)))
    s.narrowing.push(`${flag('proxy-uid', 'u')} exempts UID ${uids.join(',')}, not only the proxy's ${id.proxyUid}`);
  if (id.proxyGid !== undefined) {
    const gids = (t.get('proxy-gid') || t.get('proxy-uid') || String(id.proxyGid)).split(',');
    if (!gids.every((g) => g.trim() === String(id.proxyGid)))
      s.narrowing.push(`${flag('proxy-gid', 'g')} exempts GID ${gids.join(',')}, not only the proxy's ${id.proxyGid}`);
  }
  const mode = t.get('istio-inbound-interception-mode') || 'REDIRECT';
  if (mode !== 'REDIRECT' && mode !== 'TPROXY')
    s.narrowing.push(`${flag('istio-inbound-interception-mode', 'm')} is "${mode}"`);
  if ((t.get('istio-exclude-interfaces') ?? '').trim() !== '')
    s.narrowing.push(
      `${flag('istio-exclude-interfaces', 'c')} is set: traffic on those interfaces would bypass the proxy`,
    );
  const reroute = rerouteProblem(flag('kube-virt-interfaces', 'k'), t.get('kube-virt-interfaces'));
  if (reroute) s.narrowing.push(reroute);
  for (const off of ['dry-run', 'skip-rule-apply', 'cleanup-only', 'cni-mode'])
    if (t.bool(off)) s.narrowing.push(`${who} --${off} is set: no rules would be installed`);
  if ((t.get('network-namespace') ?? '') !== '')
    s.narrowing.push(`${who} --network-namespace is set: the rules would go to another namespace`);
  s.narrowing.push(...t.narrowing.map((n) => `${who} ${n}`));
  s.invalid.push(...t.problems.map((p) => `${who}: ${p}`));
  return s;
}

function commandProblem(c: Container): Problem {
  const cmd = c.command;
  if (cmd !== undefined && !(cmd.length === 1 && PILOT_AGENT.includes(cmd[0])))
    return `its command ${JSON.stringify(cmd)} replaces pilot-agent`;
  if (c.args?.[0] !== 'istio-iptables') return 'its arguments do not run istio-iptables';
  return undefined;
}

export const istio: MeshProfile = {
  name: 'istio',
  title: 'Istio',
  companion: true,
  names: { proxy: 'istio-proxy', init: 'istio-init', validator: 'istio-validation' },
  annotations: [
    INJECT,
    ISTIO_STATUS,
    ISTIO_TEMPLATES,
    'sidecar.istio.io/interceptionMode',
    // pilot-agent's ProxyConfig override, parsed as YAML by src/policy/judge/istio-pod.ts, and its discovery address.
    'proxy.istio.io/config',
    'sidecar.istio.io/discoveryAddress',
    // Ambient mode's per-pod switches (src/policy/ambient/refusals.ts).
    'ambient.istio.io/redirection',
    'ambient.istio.io/bypass-inbound-capture',
    'ambient.istio.io/dns-capture',
    ...[
      'excludeOutboundIPRanges',
      'excludeOutboundPorts',
      'excludeInboundPorts',
      'includeOutboundIPRanges',
      'includeInboundPorts',
      'excludeInterfaces',
    ].map((k) => `${TRAFFIC}/${k}`),
    // Interfaces whose inbound traffic is rerouted to the outbound listener (src/mesh/reroute-interfaces.ts).
    ...REROUTE_ANNOTATIONS,
  ],

  // istiod's injector replaces `image: auto` with the revision's proxy image (pkg/kube/inject/webhook.go AutoImage).
  placeholderImage: 'auto',

  learnFrom: { configMap: isIstioInjectorConfigMap, format: 'json', images: istioInjectorImages },

  optOut: (pod) => injectSwitch(pod),

  redirectOptOut,

  gateway: istioGateway,

  annotationSettings,

  judgeProxy(c, pod, id) {
    if (!fromRepositories(c.image, id.images.proxy))
      return `image ${c.image ?? '(none)'} is not one of the recognised proxy images (${id.images.proxy.join(', ')})`;
    // A gateway's proxy (`proxy router`, `proxy waypoint`) is the real one only as its pod's only container.
    const gatewayAlone = pod.gateway?.alone === true && pod.first;
    if (c.args?.[0] !== 'proxy' || !(c.args[1] === 'sidecar' || gatewayAlone))
      return (
        `its arguments ${JSON.stringify(c.args?.slice(0, 2) ?? [])} ` +
        'do not run the proxy as a sidecar ("proxy sidecar")' +
        (pod.gateway ? ', and a gateway runs the proxy as its only container' : '')
      );
    // A lone gateway is not redirected at all: whatever it runs as, it exempts no one (on OpenShift its chart leaves
    // the UID to the SCC). Beside an app, istio-cni exempts the UID/GID the proxy container declares (1337 when
    // unset): it must be the configured one.
    if (gatewayAlone) return undefined;
    const uid = c.securityContext?.runAsUser ?? 1337;
    if (uid !== id.proxyUid) return `it runs as UID ${uid}, but the redirect exempts the proxy UID ${id.proxyUid}`;
    const gid = c.securityContext?.runAsGroup ?? 1337;
    if (id.proxyGid !== undefined && gid !== id.proxyGid)
      return `it runs as GID ${gid}, but the redirect exempts the proxy GID ${id.proxyGid}`;
    // istio-cni reads the proxy's env as a map (the last DISABLE_ENVOY wins, as in the kubelet's) with ParseBool.
    const disable = c.env?.findLast((e) => e.name === 'DISABLE_ENVOY');
    if (goBool(disable?.value) === true)
      return `env DISABLE_ENVOY=${disable?.value}: Envoy does not run and the CNI plugin skips the pod`;
    return undefined;
  },

  judgeInit(c, id) {
    if (!fromRepositories(c.image, id.images.init))
      return {
        problem: `image ${c.image ?? '(none)'} is not one of the recognised init images (${id.images.init.join(', ')})`,
      };
    const cmd = commandProblem(c);
    if (cmd) return { problem: cmd };
    const caps = addedCapabilities(c);
    if (c.securityContext?.privileged !== true && !(caps.has('NET_ADMIN') && caps.has('NET_RAW'))) {
      return { problem: 'it lacks NET_ADMIN and NET_RAW, so it cannot install the redirect' };
    }
    const t = readIstioIptables(c);
    if (t.bool('run-validation'))
      return { problem: 'it runs --run-validation: it checks rules instead of installing them' };
    return { settings: iptablesSettings(t, id, 'istio-init') };
  },

  judgeValidator(c, _pod, id) {
    if (!fromRepositories(c.image, id.images.validator))
      return (
        `image ${c.image ?? '(none)'} is not one of the recognised validation images ` +
        `(${id.images.validator.join(', ')})`
      );
    const cmd = commandProblem(c);
    if (cmd) return cmd;
    const t = readIstioIptables(c);
    if (!t.bool('run-validation')) return 'it does not run --run-validation';
    if (t.problems.length) return t.problems.join('; ');
    if (t.get('envoy-port') !== String(id.outboundPort) || t.get('inbound-capture-port') !== String(id.inboundPort)) {
      return (
        `it listens on ${t.get('envoy-port')}/${t.get('inbound-capture-port')}, ` +
        `not on the proxy's ${id.outboundPort}/${id.inboundPort}`
      );
    }
    return undefined;
  },

  cniSkips(pod) {
    if (pod.metadata?.annotations?.[ISTIO_STATUS] === undefined)
      return `the pod has no ${ISTIO_STATUS} annotation, which istio-cni requires`;
    const off = cniInjectOff(pod);
    if (off) return `istio-cni skips pods with ${off}`;
    return undefined;
  },

  statusOps: (pod, from, to) => istioStatusOps(pod.metadata?.annotations?.[ISTIO_STATUS], from, to),
};
