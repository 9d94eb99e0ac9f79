/**
 * Where Kubernetes' ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount) mounts a pod's API token:
 * names the pod layer owns, read by the injection step that adds the same mount (src/policy/mutate/service-account.ts) and
 * by the container contracts that accept it (src/policy/judge/common.ts).
 */

/** The plugin's DefaultAPITokenMountPath. */
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The plugin's ServiceAccountVolumeName + "-": it takes the first volume whose name starts so as its own. */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
