/**
 * The configuration compiled once into what the admission path uses: the profile, the identity judges need, and
 * the containers meshgate injects, built and frozen here so no review builds them again, with their JSON
 * (`preEncode`: the patch encoder copies it into every patch that adds them). `Compiled` is `DeepReadonly` all the
 * way down: shared by every review, changed by none.
 */
import type { MeshgateConfig } from './types.ts';
import { PROFILES } from '../mesh/index.ts';
import type { MeshIdentity, MeshProfile, Role } from '../mesh/types.ts';
import type { Container, SecurityContext } from '../contract/pod.ts';
import { parseHostPort } from '../util/values.ts';
import { deepFreeze } from '../util/json.ts';
import { preEncode, type PreEncoded } from '../util/base64-json.ts';
import type { DeepReadonly } from '../util/readonly.ts';
import { exclusionEnv } from '../mesh/own-init.ts';
import {
  type ControlPlane,
  type ControlPlaneFacts,
  defaultControlPlane,
  mergeControlPlane,
  pemBodies,
} from '../mesh/control-plane.ts';

/** What mesh custom injects, each with its JSON (util/base64-json.ts). */
export interface OwnTemplates {
  proxy: PreEncoded<Container>;
  proxyNative: PreEncoded<Container>;
  init: PreEncoded<Container>;
  volumes: PreEncoded<Array<Record<string, unknown> & { name: string }>>;
}

export type Compiled = DeepReadonly<{
  config: MeshgateConfig;
  profile: MeshProfile;
  identity: MeshIdentity;
  names: Record<Role, string>;
  probe: { host: string; port: number; loopback: boolean };
  validator: PreEncoded<Container>;
  /** The validator of Istio ambient pods (`validate-redirect --ambient`), under the validator's name. */
  ambientValidator: PreEncoded<Container>;
  /** mesh custom: what meshgate injects. Absent for companion profiles, whose mesh injects. */
  own?: OwnTemplates;
  /**
   * Where the mesh's proxy may connect and whom it trusts (src/mesh/control-plane.ts): the profile's defaults, the
   * configured controlPlane and what the mesh's ConfigMaps say (learned).
   */
  controlPlane: ControlPlane;
}>;

function restricted(uid: number, gid: number): SecurityContext {
  return {
    runAsUser: uid,
    runAsGroup: gid,
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

function validatorContainer(c: DeepReadonly<MeshgateConfig>, loopback: boolean): Container {
  // Loopback probe (Istio's 127.0.0.6): listen on both proxy ports; the proxy UID's loopback traffic is redirected
  // to the inbound one. Off-pod probe (Linkerd): say so explicitly, the validator refuses it otherwise.
  const args = loopback
    ? [`--outbound-port=${c.proxy.outboundPort}`, `--inbound-port=${c.proxy.inboundPort}`]
    : ['--external-probe', `--outbound-port=${c.proxy.outboundPort}`, '--inbound-port=none'];
  args.push(`--probe-address=${c.validator.probeAddress}`, `--timeout=${c.validator.timeoutSeconds}s`);
  return {
    name: c.validator.name,
    image: c.validator.image,
    command: [...c.validator.command],
    args,
    env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
    // Node.js peaks at ~80 MB here (measured): 128Mi leaves room, 64Mi would be OOM-killed (exit 137).
    resources: { requests: { cpu: '10m', memory: '96Mi' }, limits: { cpu: '500m', memory: '128Mi' } },
    securityContext: restricted(c.validator.uid, c.validator.gid),
  };
}

/**
 * The ambient validator: the validator's name (so the repair controller and quarantine, which key on it and on exit
 * 42, handle it alike), image and identity; ztunnel's rules exempt no UID (they match ztunnel's packet mark), so any
 * non-root identity is captured.
 */
function ambientValidatorContainer(c: DeepReadonly<MeshgateConfig>): Container {
  const sidecar = validatorContainer(c, true);
  return { ...sidecar, args: ['--ambient', `--timeout=${c.ambient.timeoutSeconds}s`] };
}

function ownTemplates(c: DeepReadonly<MeshgateConfig>): OwnTemplates {
  const gid = c.proxy.gid ?? c.proxy.uid;
  const proxy: Container = {
    name: c.proxy.name,
    image: c.proxy.image,
    args: [...(c.proxy.args ?? [])],
    env: structuredClone(c.proxy.env ?? []) as Container['env'],
    ports: structuredClone(c.proxy.ports ?? []),
    resources: structuredClone(c.proxy.resources ?? {}),
    securityContext: restricted(c.proxy.uid, gid),
    volumeMounts: structuredClone(c.proxy.volumeMounts ?? []),
  };
  const init: Container = {
    name: c.init.name,
    image: c.init.image,
    ...(c.init.command?.length ? { command: [...c.init.command] } : {}),
    args: [...(c.init.args ?? [])],
    env: exclusionEnv(undefined),
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
    securityContext: {
      // iptables needs root in the pod's network namespace with NET_ADMIN and NET_RAW, nothing more; it writes
      // its lock file, so the root filesystem stays writable (as Istio's istio-init).
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: false,
      capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
    },
  };
  // A native sidecar is an init container that keeps running: it starts before, and outlives, the app.
  return {
    proxy: preEncode(proxy),
    proxyNative: preEncode({ ...proxy, restartPolicy: 'Always' }),
    init: preEncode(init),
    volumes: preEncode(structuredClone(c.volumes ?? []) as Array<Record<string, unknown> & { name: string }>),
  };
}

/** `learned`: what the mesh's own ConfigMaps say about its control plane (src/config/learned.ts). */
export function compileConfig(config: DeepReadonly<MeshgateConfig>, learned?: ControlPlaneFacts): Compiled {
  const profile = PROFILES[config.mesh];
  const probe = parseHostPort(config.validator.probeAddress);
  if (!probe.ok) throw new Error(`validator.probeAddress: ${probe.error}`); // config/semantics.ts refused it already
  // 127.0.0.0/8 is always on lo; ::6 only once the mesh adds it there (docs/validate-redirect.md).
  const loopback = probe.value.host.startsWith('127.') || probe.value.host === '::6';
  const images = config.recognisedImages ?? { proxy: [], init: [], validator: [] };
  return deepFreeze({
    config,
    profile,
    identity: {
      proxyUid: config.proxy.uid,
      proxyGid: config.proxy.gid,
      outboundPort: config.proxy.outboundPort,
      inboundPort: config.proxy.inboundPort,
      images: { proxy: [...images.proxy], init: [...images.init], validator: [...images.validator] },
    },
    names: { proxy: config.proxy.name, init: config.init.name, validator: config.validator.name },
    probe: { ...probe.value, loopback },
    validator: preEncode(validatorContainer(config, loopback)),
    ambientValidator: preEncode(ambientValidatorContainer(config)),
    own: profile.companion ? undefined : ownTemplates(config),
    controlPlane: mergeControlPlane(
      defaultControlPlane(config.mesh),
      {
        addresses: [...(config.controlPlane?.addresses ?? [])],
        trustAnchors: (config.controlPlane?.trustAnchors ?? []).flatMap(pemBodies),
      },
      learned,
    ),
  });
}
