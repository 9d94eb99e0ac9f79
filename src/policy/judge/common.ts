/**
 * Pieces every contract shares: what the apiserver itself adds to each container (defaults, the ServiceAccount
 * token mount), and the security-context fields that only take rights away.
 */
import { isObject } from '../../util/json.ts';
import { TOKEN_MOUNT_PATH, TOKEN_VOLUME_PREFIX } from '../../pod/service-account-token.ts';
import {
  anyValue,
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
 * The ServiceAccount admission plugin's token mount (src/inject/service-account.ts): read-only, at the standard path,
 * of the pod's projected `kube-api-access-…` volume, which holds the token, the cluster CA and the namespace.
 */
export const TOKEN_MOUNT: MountRule = {
  name: new RegExp(`^${TOKEN_VOLUME_PREFIX}[a-z0-9]+$`),
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
 * Security-context fields that only take rights away (a seccomp or AppArmor profile, the default /proc mount):
 * policy engines (Kyverno, Gatekeeper mutations for Pod Security `restricted`) add them to every container, the
 * meshes' own containers included. An SELinux label or Windows options could grant rights: never.
 */
export const TIGHTENING: Readonly<Record<string, FieldCheck>> = {
  seccompProfile: anyValue('a seccomp profile only forbids system calls'),
  appArmorProfile: anyValue('an AppArmor profile only forbids access'),
  procMount: oneOf(['Default']),
};
