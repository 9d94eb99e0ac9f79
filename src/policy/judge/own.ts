/**
 * meshgate's own containers (its validator under every profile; the proxy and init container of mesh custom): a
 * container counts as one only if it is the compiled template, field by field. What may differ is listed here, each
 * with why: what the apiserver adds or defaults, the pod's own ServiceAccount token mount, resources (the proxy's may
 * be set per pod by annotation), and profiles that only take rights away.
 */
import type { Container } from '../../contract/pod.ts';
import type { DeepReadonly } from '../../util/readonly.ts';
import { env, exactly, mounts, securityContext, volume, type EnvRule, type MountRule } from './checks.ts';
import { APISERVER_DEFAULTED, confinement, SIZING, TOKEN_MOUNT } from './common.ts';
import type { ContainerContract, FieldCheck } from './types.ts';

const PRODUCER = "meshgate's template";

/** Fields whose every value is the template's; all others are listed below. */
const EXACT = [
  'image',
  'command',
  'args',
  'ports',
  'restartPolicy',
  'lifecycle',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'workingDir',
];

/** The template's variables, literal or downward API, and nothing else. */
function envOf(t: DeepReadonly<Container>): FieldCheck {
  const names: Record<string, EnvRule> = {};
  for (const e of t.env ?? []) {
    names[e.name] =
      e.valueFrom !== undefined
        ? { from: [structuredClone(e.valueFrom) as Record<string, unknown>] }
        : {
            value: (v) =>
              v === (e.value ?? '') ? undefined : `differs from the template's ${JSON.stringify(e.value ?? '')}`,
          };
  }
  return env({ names, other: { refuse: "meshgate's template sets no such variable" } });
}

/** The template's mounts (of the configured volumes), plus the ServiceAccount token mount the apiserver adds. */
function mountsOf(
  t: DeepReadonly<Container>,
  volumes: ReadonlyArray<DeepReadonly<Record<string, unknown>>>,
): FieldCheck {
  const rules: MountRule[] = [TOKEN_MOUNT];
  for (const m of (t.volumeMounts as
    | ReadonlyArray<{ name: string; mountPath: string; readOnly?: boolean }>
    | undefined) ?? []) {
    const v = volumes.find((x) => x.name === m.name);
    const { name: _n, ...source } = (v ?? {}) as Record<string, unknown>;
    rules.push({
      name: m.name,
      mountPath: m.mountPath,
      ...(m.readOnly ? { readOnly: true as const } : {}),
      volume: volume.equals(structuredClone(source)),
    });
  }
  return mounts({ rules });
}

/**
 * The contract of a template: every field it sets is pinned; `resources` may vary for the proxy (per-pod annotations,
 * src/policy/mutate/overrides.ts).
 */
export function ownContract(
  t: DeepReadonly<Container>,
  volumes: ReadonlyArray<DeepReadonly<Record<string, unknown>>> = [],
  /** Fields judged elsewhere: the init container's per-pod exemptions in its env (src/mesh/own-init.ts). */
  judgedElsewhere: Readonly<Record<string, FieldCheck>> = {},
): ContainerContract {
  // What it runs first, so a look-alike is named by its image or command.
  const fields: Record<string, FieldCheck> = {};
  for (const f of EXACT) fields[f] = exactly(structuredClone((t as Record<string, unknown>)[f]));
  Object.assign(fields, {
    ...APISERVER_DEFAULTED,
    ...SIZING,
    env: envOf(t),
    volumeMounts: mountsOf(t, volumes),
    securityContext: securityContext([() => structuredClone(t.securityContext ?? {}) as Record<string, unknown>], {
      appArmorProfile: confinement('AppArmor'),
    }),
  });
  return { producer: PRODUCER, fields: { ...fields, ...judgedElsewhere } };
}
