/**
 * Pieces every contract shares: what the apiserver itself adds to each container (defaults, the ServiceAccount
 * token mount), and the security-context fields that only take rights away.
 */
import { isObject } from '../../util/json.ts';
import { TOKEN_MOUNT_PATH, TOKEN_VOLUME_NAME } from '../../pod/service-account-token.ts';
import {
  imagePullPolicy,
  oneOf,
  resizePolicy,
  resources,
  terminationMessagePath,
  terminationMessagePolicy,
  type MountRule,
} from './checks.ts';
import type { FieldCheck } from './types.ts';

/** Fields the apiserver defaults on every container, and how much a pod may set them (src/policy/judge/checks.ts). */
export const APISERVER_DEFAULTED: Readonly<Record<string, FieldCheck>> = {
  imagePullPolicy,
  terminationMessagePath,
  terminationMessagePolicy,
};

/** How much of the node a container gets: never what it runs. */
export const SIZING: Readonly<Record<string, FieldCheck>> = {
  resources,
  resizePolicy,
};

/**
 * The ServiceAccount admission plugin's token mount (src/policy/mutate/service-account.ts): read-only, at the standard path,
 * of the pod's projected `kube-api-access-…` volume, which holds the token, the cluster CA and the namespace.
 */
export const TOKEN_MOUNT: MountRule = {
  name: TOKEN_VOLUME_NAME,
  mountPath: TOKEN_MOUNT_PATH,
  readOnly: true,
  volume: (vol) => {
    if (!vol) return undefined;
    const p = vol.projected;
    if (!isObject(p) || Object.keys(vol).some((k) => k !== 'name' && k !== 'projected'))
      return 'is not the projected ServiceAccount token volume';
    const ok = (Array.isArray(p.sources) ? p.sources : p.sources === undefined ? [] : [null]).every(
      (s) =>
        isObject(s) &&
        (s.serviceAccountToken !== undefined || s.configMap !== undefined || s.downwardAPI !== undefined),
    );
    return ok ? undefined : 'holds sources the ServiceAccount plugin never adds';
  },
};

/**
 * A seccomp or AppArmor profile that confines: the runtime's default, or a profile the node's administrator installed
 * (`Localhost`, named by `localhostProfile`). `Unconfined` takes the runtime's default profile AWAY (issue 33 §8: it
 * was counted as tightening): the container may then make every system call, or touch every file, the runtime's
 * default forbids. Without a type the apiserver refuses the profile; any other key is not a profile's.
 */
export function confinement(what: string): FieldCheck {
  return (v) => {
    if (v === undefined) return undefined;
    if (!isObject(v) || Object.keys(v).some((k) => k !== 'type' && k !== 'localhostProfile'))
      return `is ${JSON.stringify(v)}, not a ${what} profile`;
    if (v.type === 'RuntimeDefault' || (v.type === 'Localhost' && typeof v.localhostProfile === 'string'))
      return undefined;
    if (v.type === 'Unconfined')
      return `is Unconfined: it lifts the runtime's default ${what} profile, which only the mesh's injector could choose`;
    return `is ${JSON.stringify(v)}: only RuntimeDefault and Localhost confine`;
  };
}

/**
 * Security-context fields that only take rights away (a confining seccomp or AppArmor profile, the default /proc
 * mount): policy engines (Kyverno, Gatekeeper mutations for Pod Security `restricted`) add them to every container,
 * the meshes' own containers included. `Unconfined` profiles, an SELinux label or Windows options could grant
 * rights: never.
 */
export const TIGHTENING: Readonly<Record<string, FieldCheck>> = {
  seccompProfile: confinement('seccomp'),
  appArmorProfile: confinement('AppArmor'),
  procMount: oneOf(['Default']),
};
