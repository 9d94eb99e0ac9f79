/**
 * Linkerd's proxy injector, simulated (issue 34 §5): whether it injects a pod (pkg/inject/report.go Injectable,
 * disabledByAnnotation), the values of ConfigMap linkerd-config overridden by the pod's and its namespace's
 * config.linkerd.io annotations (pkg/inject ApplyAnnotationOverrides, the ones that shape what meshgate judges), and
 * the containers, volumes and order of charts/patch + partials (_proxy.tpl, _proxy-init.tpl,
 * _network-validator.tpl). Tested against Linkerd's real injector (test/mesh/simulate-linkerd-real.test.ts).
 */
import { createHash } from 'node:crypto';
import {
  copy,
  type Json,
  asList,
  obj,
  type PodJson,
  type Simulated,
  type SimulationContext,
  sprint,
  strMap,
  truthy,
} from './types.ts';

export interface LinkerdInjector {
  source: string;
  values: Json;
}

export const LINKERD_DIFFERS: readonly string[] = [
  "the proxy's literal environment (listeners, timeouts, identity names) is not reproduced: meshgate judges only that it is literal",
  "tracing, opaque ports read from Services and the debug container's own fields are not simulated",
];

export function readLinkerdInjector(
  source: { name: string; namespace?: string },
  values: unknown,
): LinkerdInjector | { problem: string } {
  const where = `ConfigMap ${source.namespace ? `${source.namespace}/` : ''}${source.name}`;
  const v = obj(values);
  if (!truthy(obj(obj(v.proxy).image).name)) return { problem: `${where}: its values set no proxy.image.name` };
  return { source: where, values: v };
}

const INJECT = 'linkerd.io/inject';
const C = 'config.linkerd.io';

/** pkg/inject: the config annotations a pod inherits from its namespace when it does not set them. */
function effectiveAnnotations(pod: Record<string, string>, ns: Record<string, string>): Record<string, string> {
  const out = { ...pod };
  for (const [k, v] of Object.entries(ns))
    if (
      (k.startsWith(`${C}/`) || k.startsWith('config.alpha.linkerd.io/') || k.startsWith('config.beta.linkerd.io/')) &&
      !Object.hasOwn(out, k)
    )
      out[k] = v;
  return out;
}

/** healthcheck/sidecar.go HasExistingSidecars: a mesh's proxy or init container, by name or image. */
function existingSidecar(spec: Json): boolean {
  const image = (c: Json) => (typeof c.image === 'string' ? c.image : '');
  const all = [...asList(spec.initContainers), ...asList(spec.containers)].map(obj);
  if (
    all.some(
      (c) =>
        image(c).startsWith('cr.l5d.io/linkerd/proxy:') ||
        image(c).startsWith('gcr.io/istio-release/proxyv2:') ||
        c.name === 'linkerd-proxy' ||
        c.name === 'istio-proxy',
    )
  )
    return true;
  return asList(spec.initContainers)
    .map(obj)
    .some(
      (c) =>
        image(c).startsWith('cr.l5d.io/linkerd/proxy-init:') ||
        image(c).startsWith('gcr.io/istio-release/proxy_init:') ||
        c.name === 'linkerd-init' ||
        c.name === 'istio-init',
    );
}

/** report.go: why the injector leaves the pod alone, or undefined when it injects. */
export function linkerdSkip(pod: PodJson, ctx: SimulationContext): string | undefined {
  const spec = obj(pod.spec);
  const podAnn = strMap(obj(pod.metadata).annotations);
  if (spec.hostNetwork === true) return 'the pod uses hostNetwork';
  if (existingSidecar(spec)) return 'the pod already has a proxy sidecar or its init container';
  const valid = ['', 'enabled', 'ingress', 'disabled'];
  const on = (v: string | undefined) => v === 'enabled' || v === 'ingress';
  const nsv = ctx.namespaceAnnotations?.[INJECT] ?? (ctx.namespaceAnnotations ? '' : 'enabled');
  const pv = podAnn[INJECT] ?? '';
  if (!valid.includes(nsv) || !valid.includes(pv)) return `invalid ${INJECT} value`;
  if (on(nsv)) return pv === 'disabled' ? `the pod says ${INJECT}=disabled` : automount(spec, podAnn);
  if (!on(pv)) return `neither the pod nor namespace ${ctx.namespace} says ${INJECT}=enabled`;
  return automount(spec, podAnn);
}

const automount = (spec: Json, _ann: Record<string, string>) =>
  spec.automountServiceAccountToken === false ? 'automountServiceAccountToken is false' : undefined;

const bool = (v: string | undefined): boolean | undefined =>
  v === undefined
    ? undefined
    : ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)
      ? true
      : ['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)
        ? false
        : undefined;
const int = (v: string | undefined): number | undefined =>
  v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;

export function simulateLinkerd(inj: LinkerdInjector, input: PodJson, ctx: SimulationContext): Simulated {
  const by = `Linkerd's proxy injector (${inj.source})`;
  const skip = linkerdSkip(input, ctx);
  if (skip) return { kind: 'not-injected', by, why: skip };
  const pod = copy(input);
  const meta = obj(pod.metadata);
  const spec = obj(pod.spec);
  // Linkerd's decoder takes an unquoted YAML true for "true" (the corpus has such pods); Istio's refuses them.
  const own = Object.fromEntries(
    Object.entries(obj(meta.annotations)).flatMap(([k, x]) =>
      typeof x === 'string' || typeof x === 'boolean' || typeof x === 'number' ? [[k, String(x)]] : [],
    ),
  );
  const ann = effectiveAnnotations(own, { ...(ctx.namespaceAnnotations ?? {}) });
  const v = copy(inj.values);
  const proxy = obj(v.proxy);
  const image = { ...obj(proxy.image) };
  const ports = { admin: 4191, control: 4190, inbound: 4143, outbound: 4140, ...obj(proxy.ports) };
  const init = { ...obj(v.proxyInit) };
  if (ann[`${C}/proxy-image`] !== undefined) image.name = ann[`${C}/proxy-image`];
  if (ann[`${C}/proxy-version`] !== undefined) image.version = ann[`${C}/proxy-version`];
  if (ann[`${C}/image-pull-policy`] !== undefined) image.pullPolicy = ann[`${C}/image-pull-policy`];
  for (const p of ['control', 'inbound', 'admin', 'outbound'] as const) {
    const n = int(ann[`${C}/${p}-port`]);
    if (n !== undefined) ports[p] = n;
  }
  const uid = int(ann[`${C}/proxy-uid`]) ?? (proxy.uid as number | undefined) ?? 2102;
  const gid = int(ann[`${C}/proxy-gid`]) ?? (proxy.gid as number | undefined) ?? -1;
  if (ann[`${C}/skip-inbound-ports`] !== undefined) init.ignoreInboundPorts = ann[`${C}/skip-inbound-ports`];
  if (ann[`${C}/skip-outbound-ports`] !== undefined) init.ignoreOutboundPorts = ann[`${C}/skip-outbound-ports`];
  if (ann[`${C}/skip-subnets`] !== undefined) init.skipSubnets = ann[`${C}/skip-subnets`];
  const native =
    bool(
      ann[`${C}/proxy-enable-native-sidecar`] ??
        ann['config.beta.linkerd.io/proxy-enable-native-sidecar'] ??
        ann['config.alpha.linkerd.io/proxy-enable-native-sidecar'],
    ) ?? proxy.nativeSidecar === true;
  const awaitOn = ann[`${C}/proxy-await`] !== undefined ? ann[`${C}/proxy-await`] === 'enabled' : proxy.await !== false;
  const waitExit =
    int(ann['config.alpha.linkerd.io/proxy-wait-before-exit-seconds']) ?? Number(proxy.waitBeforeExitSeconds ?? 0);
  const imageRef = `${sprint(image.name)}:${truthy(image.version) ? sprint(image.version) : sprint(v.linkerdVersion)}`;
  const pullPolicy = truthy(image.pullPolicy) ? image.pullPolicy : v.imagePullPolicy;
  const cni = v.cniEnabled === true;
  const projection = obj(v.identity).serviceAccountTokenProjection !== false;
  const containers = asList(spec.containers) as Json[];
  const saMount = (asList(obj(containers[0]).volumeMounts) as Json[]).find(
    (m) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount',
  );
  const firstCaps = obj(obj(obj(containers[0]).securityContext).capabilities);
  const capsSet = obj(obj(containers[0]).securityContext).capabilities !== undefined;
  const initC: Json = cni
    ? validator(v, imageRef, pullPolicy)
    : proxyInit(v, init, imageRef, pullPolicy, ports, uid, gid, saMount, capsSet ? firstCaps : undefined, ann);
  const proxyC = proxyContainer(v, imageRef, pullPolicy, ports, uid, gid, {
    native,
    awaitOn,
    waitExit,
    projection,
    saMount,
    caps: capsSet ? firstCaps : undefined,
  });
  const volumes = [...(asList(spec.volumes) as Json[])];
  if (!cni) volumes.push({ emptyDir: {}, name: 'linkerd-proxy-init-xtables-lock' });
  volumes.push({ name: 'linkerd-identity-end-entity', emptyDir: { medium: 'Memory' } });
  if (projection)
    volumes.push({
      name: 'linkerd-identity-token',
      projected: {
        sources: [
          {
            serviceAccountToken: {
              path: 'linkerd-identity-token',
              expirationSeconds: 86400,
              audience: 'identity.l5d.io',
            },
          },
        ],
      },
    });
  let inits = [...(asList(spec.initContainers) as Json[])];
  let apps = [...containers];
  // config.linkerd.io/enable-debug-sidecar: the debug container, added before the proxy (charts/patch).
  if (bool(ann[`${C}/enable-debug-sidecar`])) {
    const dbg = obj(obj(v.debugContainer).image);
    const name = ann[`${C}/debug-image`] ?? sprint(dbg.name ?? 'cr.l5d.io/linkerd/debug');
    const version =
      ann[`${C}/debug-image-version`] ?? (truthy(dbg.version) ? sprint(dbg.version) : sprint(v.linkerdVersion));
    apps.push({ name: 'linkerd-debug', image: `${name}:${version}` });
  }
  if (native) inits = [initC, proxyC, ...inits];
  else {
    inits = [...inits, initC];
    apps = awaitOn ? [proxyC, ...apps] : [...apps, proxyC];
  }
  spec.initContainers = inits;
  spec.containers = apps;
  spec.volumes = volumes;
  const ns = sprint(v.namespace ?? 'linkerd');
  const pem = sprint(v.identityTrustAnchorsPEM ?? '');
  meta.annotations = {
    ...ann,
    'linkerd.io/created-by': `linkerd/proxy-injector ${sprint(v.linkerdVersion)}`,
    'linkerd.io/proxy-version': truthy(image.version) ? sprint(image.version) : sprint(v.linkerdVersion),
    'linkerd.io/trust-root-sha256': createHash('sha256').update(pem).digest('hex'),
  };
  meta.labels = {
    ...strMap(meta.labels),
    'linkerd.io/control-plane-ns': ns,
    'linkerd.io/workload-ns': ctx.namespace,
    ...(ctx.owner ? { [`linkerd.io/proxy-${ctx.owner.kind.toLowerCase()}`]: ctx.owner.name } : {}),
  };
  pod.metadata = meta;
  pod.spec = spec;
  return { kind: 'injected', pod, by, differs: [...LINKERD_DIFFERS] };
}

function validator(v: Json, image: string, pullPolicy: unknown): Json {
  const nv = obj(v.networkValidator);
  const ipv4 = v.disableIPv6 === true;
  return {
    name: 'linkerd-network-validator',
    image,
    imagePullPolicy: pullPolicy,
    ...(nv.enableSecurityContext !== false
      ? {
          securityContext: truthy(nv.securityContext)
            ? nv.securityContext
            : {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                readOnlyRootFilesystem: true,
                runAsGroup: 65534,
                runAsNonRoot: true,
                runAsUser: 65534,
                seccompProfile: { type: 'RuntimeDefault' },
              },
        }
      : {}),
    command: ['/usr/lib/linkerd/linkerd2-network-validator'],
    args: [
      ...['--log-format', sprint(nv.logFormat ?? 'plain'), '--log-level', sprint(nv.logLevel ?? 'debug')],
      ...[
        '--connect-addr',
        truthy(nv.connectAddr) ? sprint(nv.connectAddr) : ipv4 ? '1.1.1.1:20001' : '[fd00::1]:20001',
      ],
      ...['--listen-addr', truthy(nv.listenAddr) ? sprint(nv.listenAddr) : ipv4 ? '0.0.0.0:4140' : '[::]:4140'],
      ...['--timeout', sprint(nv.timeout ?? '10s')],
    ],
  };
}

function proxyInit(
  v: Json,
  init: Json,
  image: string,
  pullPolicy: unknown,
  ports: Record<string, number>,
  uid: number,
  gid: number,
  saMount: Json | undefined,
  caps: Json | undefined,
  ann: Record<string, string>,
): Json {
  const args: string[] = [];
  if ((init.iptablesMode ?? 'legacy') === 'nft')
    args.push('--firewall-bin-path', 'iptables-nft', '--firewall-save-bin-path', 'iptables-nft-save');
  if (v.disableIPv6 === true) args.push('--ipv6=false');
  args.push(
    '--incoming-proxy-port',
    String(ports.inbound),
    '--outgoing-proxy-port',
    String(ports.outbound),
    '--proxy-uid',
    String(uid),
  );
  if (gid >= 0) args.push('--proxy-gid', String(gid));
  const ignoreIn = truthy(init.ignoreInboundPorts) ? `,${sprint(init.ignoreInboundPorts)}` : '';
  args.push('--inbound-ports-to-ignore', `${ports.control},${ports.admin}${ignoreIn}`);
  if (truthy(init.ignoreOutboundPorts)) args.push('--outbound-ports-to-ignore', sprint(init.ignoreOutboundPorts));
  const closeWait =
    /^(\d+)s$/.exec(ann[`${C}/close-wait-timeout`] ?? '')?.[1] ??
    (truthy(init.closeWaitTimeoutSecs) ? sprint(init.closeWaitTimeoutSecs) : undefined);
  if (closeWait) args.push('--timeout-close-wait-secs', closeWait);
  if (truthy(init.logFormat)) args.push('--log-format', sprint(init.logFormat));
  if (truthy(init.logLevel)) args.push('--log-level', sprint(init.logLevel));
  if (truthy(init.skipSubnets)) args.push('--subnets-to-ignore', sprint(init.skipSubnets));
  const privileged = Boolean(closeWait) || init.privileged === true;
  const add = ['NET_ADMIN', 'NET_RAW', ...asList(caps?.add).map(sprint)];
  const drop = asList(caps?.drop)
    .map(sprint)
    .filter((d) => d !== 'NET_RAW' && d !== 'NET_ADMIN');
  const asRoot = init.runAsRoot === true;
  const nz = (x: unknown) => (Number(x ?? 0) === 0 ? 65534 : Number(x));
  return {
    args,
    image,
    command: ['/usr/lib/linkerd/linkerd2-proxy-init'],
    imagePullPolicy: pullPolicy,
    name: 'linkerd-init',
    securityContext: {
      allowPrivilegeEscalation: privileged,
      capabilities: { add, ...(caps && asList(caps.drop).length ? { drop } : {}) },
      privileged,
      ...(asRoot
        ? { runAsGroup: 0, runAsNonRoot: false, runAsUser: 0 }
        : { runAsNonRoot: true, runAsUser: nz(init.runAsUser), runAsGroup: nz(init.runAsGroup) }),
      readOnlyRootFilesystem: true,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    terminationMessagePolicy: 'FallbackToLogsOnError',
    volumeMounts: [
      {
        mountPath: sprint(obj(init.xtMountPath).mountPath ?? '/run'),
        name: sprint(obj(init.xtMountPath).name ?? 'linkerd-proxy-init-xtables-lock'),
      },
      ...(saMount ? [{ mountPath: saMount.mountPath, name: saMount.name, readOnly: saMount.readOnly ?? false }] : []),
    ],
  };
}

const ref = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });

function proxyContainer(
  v: Json,
  image: string,
  pullPolicy: unknown,
  ports: Record<string, number>,
  uid: number,
  gid: number,
  o: { native: boolean; awaitOn: boolean; waitExit: number; projection: boolean; saMount?: Json; caps?: Json },
): Json {
  const p = obj(v.proxy);
  const probe = (k: string) => obj(p[k]);
  const http = (path: string) => ({ path, port: ports.admin });
  const env: Json[] = [
    ...[
      ['_pod_name', 'metadata.name'],
      ['_pod_ns', 'metadata.namespace'],
      ['_pod_uid', 'metadata.uid'],
      ['_pod_ip', 'status.podIP'],
      ['_pod_nodeName', 'spec.nodeName'],
    ].map(([n, f]) => ref(n, f)),
    { name: '_pod_containerName', value: 'linkerd-proxy' },
    { name: 'LINKERD2_PROXY_INBOUND_IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
    ref('_pod_sa', 'spec.serviceAccountName'),
    { name: 'LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS', value: sprint(v.identityTrustAnchorsPEM ?? '') },
  ];
  const lifecycle: Json = {};
  if (!o.native && o.awaitOn)
    lifecycle.postStart = {
      exec: { command: ['/usr/lib/linkerd/linkerd-await', '--timeout=2m', `--port=${ports.admin}`] },
    };
  if (!o.native && o.waitExit > 0) lifecycle.preStop = { exec: { command: ['/bin/sleep', String(o.waitExit)] } };
  const mounts: Json[] = [{ mountPath: '/var/run/linkerd/identity/end-entity', name: 'linkerd-identity-end-entity' }];
  if (o.projection) mounts.push({ mountPath: '/var/run/secrets/tokens', name: 'linkerd-identity-token' });
  if (o.saMount)
    mounts.push({ mountPath: o.saMount.mountPath, name: o.saMount.name, readOnly: o.saMount.readOnly ?? false });
  return {
    env,
    image,
    imagePullPolicy: pullPolicy,
    livenessProbe: {
      httpGet: http('/live'),
      initialDelaySeconds: probe('livenessProbe').initialDelaySeconds ?? 10,
      timeoutSeconds: probe('livenessProbe').timeoutSeconds ?? 1,
    },
    name: 'linkerd-proxy',
    ports: [
      { containerPort: ports.inbound, name: 'linkerd-proxy' },
      { containerPort: ports.admin, name: 'linkerd-admin' },
    ],
    readinessProbe: {
      httpGet: http('/ready'),
      initialDelaySeconds: probe('readinessProbe').initialDelaySeconds ?? 2,
      timeoutSeconds: probe('readinessProbe').timeoutSeconds ?? 1,
    },
    ...(o.native && o.awaitOn
      ? {
          startupProbe: {
            httpGet: http('/ready'),
            initialDelaySeconds: probe('startupProbe').initialDelaySeconds ?? 0,
            periodSeconds: probe('startupProbe').periodSeconds ?? 1,
            failureThreshold: probe('startupProbe').failureThreshold ?? 120,
          },
        }
      : {}),
    securityContext: truthy(p.securityContext)
      ? p.securityContext
      : {
          allowPrivilegeEscalation: false,
          ...(o.caps ? { capabilities: o.caps } : {}),
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          runAsUser: uid,
          ...(gid >= 0 ? { runAsGroup: gid } : {}),
          seccompProfile: { type: 'RuntimeDefault' },
        },
    terminationMessagePolicy: 'FallbackToLogsOnError',
    ...(Object.keys(lifecycle).length ? { lifecycle } : {}),
    volumeMounts: mounts,
    ...(o.native ? { restartPolicy: 'Always' } : {}),
  };
}
