/**
 * The ServiceAccount token mount, put where the apiserver would put it anyway, so it does not call meshgate twice.
 *
 * A mutating webhook that changes a pod makes the apiserver run the whole mutating chain once more
 * (k8s.io/apiserver pkg/admission/reinvocation.go). The in-tree ServiceAccount plugin runs again first
 * (kubernetes plugin/pkg/admission/serviceaccount/admission.go, `mountServiceAccountToken`): it adds
 * `{name: <the pod's first volume named kube-api-access-…>, readOnly: true, mountPath: TOKEN_MOUNT_PATH}` to every
 * init container and container without a mount at that path — the containers meshgate just added. The pod then differs
 * from meshgate's output, so the mutating dispatcher (pkg/admission/plugin/webhook/mutating/dispatcher.go) calls every
 * webhook with reinvocationPolicy IfNeeded that it called already: meshgate, for an empty patch (measured on
 * kube-apiserver 1.34: 4,000 mutate calls for 2,000 pods). A patch that leaves every container holding such a mount
 * gives the re-run nothing to change, and the second call does not happen; the pod ends as the re-run left it before.
 */
import type { Container, Pod } from '../../contract/pod.ts';
import { MAX_PATCH_OPS } from '../limits.ts';
import { isObject } from '../../util/json.ts';
import type { DeepReadonly } from '../../util/readonly.ts';
import type { PatchOp } from '../../contract/patch.ts';

import { TOKEN_MOUNT_PATH, TOKEN_VOLUME_PREFIX } from '../../pod/service-account-token.ts';

export { TOKEN_MOUNT_PATH, TOKEN_VOLUME_PREFIX };

/** The plugin's VolumeMount, field for field. */
export interface TokenMount {
  readonly name: `${typeof TOKEN_VOLUME_PREFIX}${string}`;
  readonly readOnly: true;
  readonly mountPath: typeof TOKEN_MOUNT_PATH;
}

/** A container as a patch leaves it: the pod's own, or one of meshgate's shared templates (never copied here). */
type Placed = Container | DeepReadonly<Container>;

/** The pod's init containers and containers in the order meshgate's patch leaves them (the ops' final indices). */
export interface PatchedLists {
  readonly initContainers: readonly Placed[];
  readonly containers: readonly Placed[];
}

/** The mount of `c` at the token path (the plugin leaves a container with any mount there alone), if any. */
function mountAtTokenPath(c: Placed): Record<string, unknown> | undefined {
  const mounts = c.volumeMounts;
  if (!Array.isArray(mounts)) return undefined;
  for (const m of mounts) if (isObject(m) && m.mountPath === TOKEN_MOUNT_PATH) return m;
  return undefined;
}

/**
 * The mount the plugin adds on its re-run, when the pod evidently has automount on: a volume named kube-api-access-…
 * (the first one, as the plugin picks it) that one of the pod's containers already mounts at the token path (the
 * plugin's first run put it there). Otherwise undefined: a pod that turns automount off (here or on its
 * ServiceAccount) gets no mount from the plugin, so none from meshgate. (Nor can a pod tell an author's own volume
 * of that name, mounted at that path with automount off, from the plugin's: its containers, meshgate's included, get
 * the author's token then.)
 */
export function tokenMount(pod: Pod): TokenMount | undefined {
  if (pod.spec.automountServiceAccountToken === false) return undefined;
  const volume = pod.spec.volumes?.find((v) => v.name.startsWith(TOKEN_VOLUME_PREFIX));
  if (!volume) return undefined;
  const name = volume.name as TokenMount['name'];
  const mounts = (c: Container) => mountAtTokenPath(c)?.name === name;
  if (!pod.spec.containers.some(mounts) && !pod.spec.initContainers?.some(mounts)) return undefined;
  return { name, readOnly: true, mountPath: TOKEN_MOUNT_PATH };
}

/**
 * The ops that give the mount to every container of `lists` without one at the token path, to follow a patch of
 * `patchLength` ops that leaves the pod's containers as `lists` says (so the paths are the final indices).
 *
 * Every container, not only meshgate's: the plugin's re-run would add the mount to any container lacking it, e.g.
 * the proxy and init container a companion mesh's injector added after the plugin's first run, and any such change
 * makes the apiserver call meshgate again (test/e2e/istio-companion.test.ts: with the validator's mount alone,
 * Istio's proxy still gets its mount from the re-run, and meshgate a second call). The pod ends the same: meshgate
 * changed it, so the re-run follows and adds exactly these mounts. One exception: when meshgate's patch comes in the
 * reinvocation round (a companion whose configuration sorts before the mesh injector's: nothing to adjust on the
 * first call), no re-run follows it, and the validator now holds the mount it used to lack there — so the pod is
 * the same whichever order the webhooks run in. meshgate's answer stays idempotent: volumeMounts are not part of how
 * containers are judged (src/policy/identify.ts), so its patched pod gets no patch, hence no mounts.
 *
 * None when the patch is empty (meshgate changes nothing, so no re-run follows from it), when automount is not
 * evidently on, or when the mounts would take the patch over MAX_PATCH_OPS (then the re-run adds them: one more
 * call, never a refusal).
 */
export function tokenMountOps(pod: Pod, lists: PatchedLists, patchLength: number): PatchOp[] {
  if (patchLength === 0) return [];
  const mount = tokenMount(pod);
  if (!mount) return [];
  const ops: PatchOp[] = [];
  const room = MAX_PATCH_OPS - patchLength;
  for (const list of ['initContainers', 'containers'] as const) {
    const containers = lists[list];
    for (let i = 0; i < containers.length; i++) {
      const c = containers[i];
      if (mountAtTokenPath(c)) continue;
      const path = `/spec/${list}/${i}/volumeMounts`;
      // A template's own list is appended to (its JSON is copied as it is); a container without one gets one.
      if (Array.isArray(c.volumeMounts)) ops.push({ op: 'add', path: `${path}/-`, value: { ...mount } });
      else if (c.volumeMounts === undefined) ops.push({ op: 'add', path, value: [{ ...mount }] });
      // Over the cap the re-run adds them all: stop at the first op too many, not after one per container.
      if (ops.length > room) return [];
    }
  }
  return ops;
}
