/**
 * Where Kubernetes' ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount) mounts a pod's API token:
 * names the pod layer owns, read by the injection step that adds the same mount (src/policy/mutate/service-account.ts) and
 * by the container contracts that accept it (src/policy/judge/common.ts).
 */

/** The plugin's DefaultAPITokenMountPath. */
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The plugin's ServiceAccountVolumeName + "-": it takes the first volume whose name starts so as its own. */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
/**
 * The names the plugin gives that volume: the prefix and a random suffix (names.SimpleNameGenerator). The one test of
 * them: the contracts' token mount rule (src/policy/judge/common.ts) and the verdict cache's renaming
 * (src/policy/verdict-cache.ts) read it from here, so they cannot drift apart.
 */
export const TOKEN_VOLUME_NAME = new RegExp(`^${TOKEN_VOLUME_PREFIX}[a-z0-9]+$`);
