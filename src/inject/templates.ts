/**
 * The containers meshgate adds, built from the configured templates and the pod's overrides. Security contexts
 * are fixed here, not configurable: the proxy and validator must pass Pod Security `restricted`, and only the
 * privileged init container (init mode) may hold NET_ADMIN/NET_RAW.
 */
import type { MeshgateConfig } from '../config/types.ts';
import type { Container } from './pod.ts';
import type { Overrides } from './overrides.ts';
import { deepFreeze } from '../util/json.ts';
import { cached } from '../util/cache.ts';

/**
 * Built containers per config and inputs. Every review with the same overrides gets the same frozen object:
 * no copying per review, and the response encoder caches its JSON (see util/json.ts).
 */
const built = new WeakMap<MeshgateConfig, Map<string, Container>>();

function memo(cfg: MeshgateConfig, key: string, build: () => Container): Container {
  // Bounded: the key space is the distinct annotation overrides seen; cap it so odd inputs cannot grow it.
  return cached(cached(built, cfg, () => new Map<string, Container>()), key, () => deepFreeze(build()), 1024);
}

function restricted(uid: number) {
  return {
    runAsUser: uid,
    runAsGroup: uid,
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/**
 * Per overrides object: pods without override annotations share one frozen Overrides (inject/overrides.ts),
 * so for them the proxy and the init container's arguments are a lookup, not a key built per review.
 */
const redirectArgLists = new WeakMap<Overrides, WeakMap<MeshgateConfig, string[]>>();
const proxies = new WeakMap<Overrides, WeakMap<MeshgateConfig, { regular?: Container; native?: Container }>>();

export function proxyContainer(cfg: MeshgateConfig, o: Overrides, native: boolean): Container {
  const pair = cached(cached(proxies, o, () => new WeakMap()), cfg, (): { regular?: Container; native?: Container } => ({}));
  const kind = native ? 'native' : 'regular';
  return (pair[kind] ??= memo(cfg, `proxy|${native}|${JSON.stringify(o.resources)}`, () => buildProxy(cfg, o, native)));
}

function buildProxy(cfg: MeshgateConfig, o: Overrides, native: boolean): Container {
  const c: Container = {
    name: cfg.proxy.name,
    image: cfg.proxy.image,
    args: [...cfg.proxy.args],
    env: cfg.proxy.env.map((e) => ({ ...e })),
    ports: cfg.proxy.ports.map((p) => ({ ...p })),
    resources: structuredClone(o.resources),
    securityContext: restricted(cfg.proxy.uid),
    volumeMounts: cfg.proxy.volumeMounts.map((m) => ({ ...m })),
  };
  // A native sidecar is an init container that keeps running: it starts before, and outlives, the app.
  if (native) c.restartPolicy = 'Always';
  return c;
}

/** Arguments telling the iptables init container (or a CNI plugin reading them) what to redirect. */
export function redirectArgs(cfg: MeshgateConfig, o: Overrides): string[] {
  const args = [
    `--proxy-uid=${cfg.proxy.uid}`,
    `--outbound-port=${cfg.proxy.outboundPort}`,
    `--inbound-port=${cfg.proxy.inboundPort}`,
  ];
  if (o.excludeInboundPorts.length) args.push(`--exclude-inbound-ports=${o.excludeInboundPorts.join(',')}`);
  if (o.excludeOutboundPorts.length) args.push(`--exclude-outbound-ports=${o.excludeOutboundPorts.join(',')}`);
  if (o.excludeOutboundCidrs.length) args.push(`--exclude-outbound-cidrs=${o.excludeOutboundCidrs.join(',')}`);
  return args;
}

export function initContainer(cfg: MeshgateConfig, o: Overrides): Container {
  const args = cached(cached(redirectArgLists, o, () => new WeakMap()), cfg, (c) => redirectArgs(c, o));
  return memo(cfg, `init|${args.join(' ')}`, () => buildInit(cfg, args));
}

function buildInit(cfg: MeshgateConfig, redirect: string[]): Container {
  return {
    name: cfg.init.name,
    image: cfg.init.image,
    args: [...cfg.init.args, ...redirect],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
    securityContext: {
      // iptables needs root inside the pod's network namespace with NET_ADMIN and NET_RAW, nothing more.
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
    },
  };
}

export function validatorContainer(cfg: MeshgateConfig): Container {
  return memo(cfg, 'validator', () => buildValidator(cfg));
}

function buildValidator(cfg: MeshgateConfig): Container {
  return {
    name: cfg.validator.name,
    image: cfg.validator.image,
    command: [...cfg.validator.command],
    args: [
      `--outbound-port=${cfg.proxy.outboundPort}`,
      `--probe-address=${cfg.validator.probeAddress}`,
      `--timeout=${cfg.validator.timeoutSeconds}s`,
    ],
    env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
    // Node.js peaks at ~80 MB here (measured): 128Mi leaves room, 64Mi would be OOM-killed (exit 137).
    resources: { requests: { cpu: '10m', memory: '96Mi' }, limits: { cpu: '500m', memory: '128Mi' } },
    // The verdict goes to /dev/termination-log with policy File: the apiserver's defaults, so not sent again.
    securityContext: restricted(cfg.validator.uid),
  };
}
