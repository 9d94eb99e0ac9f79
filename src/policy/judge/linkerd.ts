/**
 * Linkerd's containers, field by field, as its proxy injector writes them (linkerd2 charts/partials/templates:
 * _proxy.tpl, _proxy-init.tpl, _network-validator.tpl; pkg/inject). The profile's judges (src/mesh/linkerd.ts) read
 * the image, command and arguments as the programs do; these contracts refuse every other field the injector never
 * writes, and every value that would run something else, from other files, or as someone else. The proxy is a Rust
 * program configured only by its environment (LINKERD2_PROXY_*): ports, timeouts and policies, never another
 * program; it is started by the image's entrypoint, so no command or arguments.
 */
import { isObject } from '../../util/json.ts';
import {
  absent,
  anyLiteral,
  anyValue,
  env,
  execHooks,
  fieldRef,
  httpGetProbe,
  mounts,
  oneOf,
  ports,
  securityContext,
  volume,
  type EnvRule,
} from './checks.ts';
import { APISERVER_DEFAULTED, SIZING, TIGHTENING, TOKEN_MOUNT } from './common.ts';
import { isControlPlaneAddress, pemBodies } from '../../mesh/control-plane.ts';
import type { ContainerContract, ContractContext, FieldCheck, Problem } from './types.ts';

const PRODUCER = "Linkerd's proxy injector";
/** The proxy's admin port (values proxy.ports.admin): its probes and linkerd-await ask it. */
const ADMIN_PORT = 4191;

const downward = (vol: Readonly<Record<string, unknown>>): Problem =>
  isObject(vol.downwardAPI) ? undefined : 'is not the downward API volume of the pod labels and annotations';

/**
 * Where Linkerd's proxy connects and whom it trusts (issue 33 §3), pinned to the installed control plane
 * (src/mesh/control-plane.ts): its destination, policy and identity services (and the tracing collector its values
 * name) by address, the identities it requires of them, and the trust anchors as a literal PEM bundle whose every
 * certificate is one of linkerd-identity-trust-roots'. The injector's other form, a configMapKeyRef to
 * linkerd-identity-trust-roots, is for Linkerd's own pods only (charts/partials _proxy.tpl): in any other namespace it
 * reads a ConfigMap of that namespace, whose author chooses the roots.
 */
const addressOf = (what: string): EnvRule => ({
  value: (v, ctx) =>
    isControlPlaneAddress(ctx.cp, v)
      ? undefined
      : `it points the proxy's ${what} at another address than the installed control plane's (${ctx.cp.addresses.join(', ')})`,
});
const identityOf = (what: string): EnvRule => ({
  value: (v, ctx) =>
    ctx.cp.names.includes(v.trim())
      ? undefined
      : `it changes the identity the proxy requires of its ${what}; the installed control plane's are ${ctx.cp.names.join(', ')}`,
});
const CONTROL_PLANE_ENV: Readonly<Record<string, EnvRule>> = {
  LINKERD2_PROXY_DESTINATION_SVC_ADDR: addressOf('destination service'),
  LINKERD2_PROXY_POLICY_SVC_ADDR: addressOf('policy service'),
  LINKERD2_PROXY_IDENTITY_SVC_ADDR: addressOf('identity service (where it gets its certificate)'),
  LINKERD2_PROXY_TRACE_COLLECTOR_SVC_ADDR: addressOf('trace collector, which it dials past the redirect,'),
  LINKERD2_PROXY_DESTINATION_SVC_NAME: identityOf('destination service'),
  LINKERD2_PROXY_POLICY_SVC_NAME: identityOf('policy service'),
  LINKERD2_PROXY_IDENTITY_SVC_NAME: identityOf('identity service'),
  LINKERD2_PROXY_TRACE_COLLECTOR_SVC_NAME: identityOf('trace collector'),
  LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS: {
    value: (v, ctx) => {
      const certs = pemBodies(v);
      if (certs.length === 0) return 'holds no PEM certificate';
      if (ctx.cp.trustAnchors.length === 0)
        return (
          "meshgate does not know the installed trust anchors (learnImages reads Linkerd's " +
          "linkerd-identity-trust-roots; or set controlPlane.trustAnchors), so it cannot tell them from the pod author's"
        );
      const foreign = certs.findIndex((c) => !ctx.cp.trustAnchors.includes(c));
      return foreign < 0
        ? undefined
        : `its certificate ${foreign + 1} of ${certs.length} is not one of the installed trust anchors: the proxy would trust identities it issued`;
    },
  },
};

const PROXY_ENV = env({
  names: {
    _pod_name: { from: [fieldRef('metadata.name')] },
    _pod_ns: { from: [fieldRef('metadata.namespace')] },
    _pod_uid: { from: [fieldRef('metadata.uid')] },
    _pod_ip: { from: [fieldRef('status.podIP')] },
    _pod_nodeName: { from: [fieldRef('spec.nodeName')] },
    _pod_sa: { from: [fieldRef('spec.serviceAccountName')] },
    LINKERD2_PROXY_INBOUND_IPS: { from: [fieldRef('status.podIPs')] },
    ...CONTROL_PLANE_ENV,
  },
  // The proxy reads LINKERD2_PROXY_* for its listeners, timeouts and policies; it runs no other program and loads no
  // code, whatever they say. A listener moved off the redirect's port fails closed. Where it connects and whom it
  // trusts are pinned above.
  other: anyLiteral,
});

const ID_TOKEN = volume.where((vol) => {
  const sources = isObject(vol.projected) ? vol.projected.sources : undefined;
  return Array.isArray(sources) && sources.every((s) => isObject(s) && isObject(s.serviceAccountToken))
    ? undefined
    : 'is not the projected linkerd-identity-token';
});

const PROXY_MOUNTS = mounts({
  rules: [
    TOKEN_MOUNT,
    {
      name: 'linkerd-identity-end-entity',
      mountPath: '/var/run/linkerd/identity/end-entity',
      volume: volume.emptyDir('Memory'),
    },
    { name: 'linkerd-podinfo', mountPath: '/var/run/linkerd/podinfo', volume: volume.where(downward) },
    { name: 'linkerd-identity-token', mountPath: '/var/run/secrets/tokens', volume: ID_TOKEN },
  ],
});

/** The proxy's security context: its UID (the redirect's exemption), no escalation, a read-only root. */
const proxySecurity = securityContext(
  [
    (ctx) => ({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: ctx.id.proxyUid,
    }),
  ],
  {
    ...TIGHTENING,
    // values proxy.gid: a GID linkerd-init (--proxy-gid) or linkerd-cni (config.linkerd.io/proxy-gid) exempts is
    // guarded for every other container of the pod (src/policy/screen.ts exemptIdentity).
    runAsGroup: anyValue('an exempt GID is guarded for every other container'),
    // The injector copies the first app container's capabilities onto the proxy (pkg/inject). The proxy runs as its
    // non-root UID from the image's own entrypoint, which has no file capabilities: it holds none of them after
    // execve, whatever the list says.
    capabilities: anyValue("copied from the app's first container; the non-root proxy holds none after execve"),
  },
);

export const LINKERD_PROXY: ContainerContract = {
  producer: PRODUCER,
  fields: {
    image: anyValue('judged by the profile: a repository of the mesh'),
    command: absent("it replaces the image's entrypoint, the proxy"),
    args: absent('the proxy takes no arguments'),
    env: PROXY_ENV,
    ports,
    livenessProbe: httpGetProbe(['/live'], () => [ADMIN_PORT]),
    readinessProbe: httpGetProbe(['/ready'], () => [ADMIN_PORT]),
    startupProbe: httpGetProbe(['/ready'], () => [ADMIN_PORT]),
    lifecycle: execHooks([
      ['/usr/lib/linkerd/linkerd-await', /^--timeout=\d+[smh]?$/, `--port=${ADMIN_PORT}`],
      ['/usr/lib/linkerd/linkerd-await', /^--timeout=\d+[smh]?$/],
      ['/bin/sleep', /^\d+$/],
    ]),
    securityContext: proxySecurity,
    volumeMounts: PROXY_MOUNTS,
    restartPolicy: anyValue('placed by the identify step: Always only as a native sidecar'),
    ...APISERVER_DEFAULTED,
    ...SIZING,
  },
};

/**
 * The capabilities Linkerd's injector copies onto linkerd-init (pkg/inject/inject.go injectPodSpec and
 * injectProxyInit, charts/partials/templates/_proxy-init.tpl): when the pod's first container — the first app
 * container, which the injector read before it put the proxy in front — sets capabilities, linkerd-init gets
 * NET_ADMIN and NET_RAW plus that container's `add`, and its `drop` without NET_ADMIN and NET_RAW ("psp compliance":
 * ingress-nginx's controller adds NET_BIND_SERVICE and drops ALL). What runs there is still linkerd2-proxy-init, judged
 * by the profile; an app container adding network-admin rights is refused on its own (redirect_tamper).
 */
function copiedCapabilities(pod: ContractContext['pod']): Record<string, unknown> | undefined {
  const caps = pod.appCapabilities;
  if (!isObject(caps)) return undefined;
  const add = ['NET_ADMIN', 'NET_RAW', ...((caps.add as string[] | undefined) ?? [])];
  const drop = ((caps.drop as string[] | undefined) ?? []).filter((d) => d !== 'NET_RAW' && d !== 'NET_ADMIN');
  return drop.length ? { add, drop } : { add };
}

/** linkerd-init's identity: root or an unprivileged UID, never the proxy's (it would exempt itself, pointlessly). */
const initIdentity: FieldCheck = (v, ctx) =>
  v === undefined || (Number.isInteger(v) && v !== ctx.id.proxyUid) ? undefined : `is ${JSON.stringify(v)}`;

export const LINKERD_INIT: ContainerContract = {
  producer: PRODUCER,
  fields: {
    image: anyValue('judged by the profile: a repository of the mesh'),
    command: anyValue('judged by the profile: linkerd2-proxy-init'),
    args: anyValue('read by the profile as proxy-init reads them'),
    securityContext: securityContext(
      [false, true].flatMap((privileged) =>
        [undefined, ['ALL'], 'copied' as const].map((drop) => (ctx: ContractContext) => ({
          allowPrivilegeEscalation: privileged,
          privileged,
          capabilities:
            drop === 'copied'
              ? (copiedCapabilities(ctx.pod) ?? { add: ['NET_ADMIN', 'NET_RAW'] })
              : drop
                ? { add: ['NET_ADMIN', 'NET_RAW'], drop }
                : { add: ['NET_ADMIN', 'NET_RAW'] },
          readOnlyRootFilesystem: true,
        })),
      ),
      {
        ...TIGHTENING,
        runAsUser: initIdentity,
        runAsGroup: anyValue('linkerd-init exempts the proxy UID only'),
        runAsNonRoot: oneOf([true, false]),
      },
    ),
    volumeMounts: mounts({
      rules: [TOKEN_MOUNT, { name: 'linkerd-proxy-init-xtables-lock', mountPath: '/run', volume: volume.emptyDir() }],
    }),
    ...APISERVER_DEFAULTED,
    ...SIZING,
  },
};

export const LINKERD_VALIDATOR: ContainerContract = {
  producer: PRODUCER,
  fields: {
    image: anyValue('judged by the profile: a repository of the mesh'),
    command: anyValue('judged by the profile: linkerd2-network-validator'),
    args: anyValue('read by the profile as the validator reads them'),
    securityContext: securityContext(
      [
        () => ({
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
          readOnlyRootFilesystem: true,
          runAsGroup: 65534,
          runAsNonRoot: true,
          runAsUser: 65534,
        }),
      ],
      TIGHTENING,
    ),
    volumeMounts: mounts({ rules: [TOKEN_MOUNT] }),
    ...APISERVER_DEFAULTED,
    ...SIZING,
  },
};

/**
 * Pod-level inputs linkerd-cni reads to exempt traffic: a pod labelled as a Linkerd control-plane component gets the
 * Kubernetes API server's ports exempted (linkerd2-proxy-init cni-plugin/main.go); only Linkerd's own namespace,
 * which meshgate never guards, holds such pods.
 */
export function linkerdPodProblem(pod: { metadata?: { labels?: Readonly<Record<string, string>> } }): Problem {
  const component = pod.metadata?.labels?.['linkerd.io/control-plane-component'];
  return component === undefined
    ? undefined
    : `label linkerd.io/control-plane-component=${component} makes linkerd-cni exempt the API server's ports; ` +
        "only Linkerd's own control plane carries it";
}
