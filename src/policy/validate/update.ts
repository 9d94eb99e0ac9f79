/**
 * Pods change after CREATE: container images are mutable, labels and annotations too, and ephemeral containers
 * are added through pods/ephemeralcontainers. The CNI plugin reads the pod when its sandbox is created — which a
 * scheduling gate can delay for as long as the author likes — so an UPDATE between CREATE and start can undo what
 * admission checked. The rule: an update may not change the mesh's containers or what meshgate and the mesh
 * recorded on the pod, and may not make the pod's posture worse than it was.
 */
import type { Compiled } from '../../config/compile.ts';
import type { NodeFacts } from '../../facts/node-facts.ts';
import { REDIRECT_LABEL, STATUS_ANNOTATION } from '../../contract/names.ts';
import type { ReasonCode } from '../../contract/reasons.ts';
import { ISTIO_STATUS } from '../../mesh/istio.ts';
import { ADMITTED_ANNOTATION } from '../../mark/mark.ts';
import type { Pod } from '../../contract/pod.ts';
import { sameJson } from '../../util/same.ts';
import { identifyPod, type MeshContainer } from '../identify.ts';
import { checkPosture } from '../posture.ts';
import { redirectionChange } from '../ambient/refusals.ts';

export type UpdateResult = { ok: true; reason: ReasonCode } | { ok: false; reason: ReasonCode; message: string };

/** What meshgate and the meshes record on a pod and read back later: fixed once the pod exists. */
const RECORDED_ANNOTATIONS = [STATUS_ANNOTATION, ISTIO_STATUS, ADMITTED_ANNOTATION];
const RECORDED_LABELS = [REDIRECT_LABEL];

function meshContainers(pod: Pod, cfg: Compiled): MeshContainer[] {
  const m = identifyPod(pod, cfg);
  return [m.proxy, m.init, m.validator].filter((c): c is NonNullable<typeof c> => c !== undefined);
}

export function checkUpdate(
  oldPod: Pod,
  newPod: Pod,
  namespace: string,
  requester: string | undefined,
  nodes: NodeFacts,
  cfg: Compiled,
  /** The namespace's labels from the webhook's cache (Istio ambient's selectors); undefined: unknown. */
  namespaceLabels?: Readonly<Record<string, string>>,
  /** The node the requester's token is bound to (its pod's node), when it is a pod-bound ServiceAccount token. */
  requesterNode?: string,
): UpdateResult {
  const ctx = { namespace, requester, namespaceLabels, existing: true };
  // The admission mark is fixed on every pod, meshed or not: added later, it would vouch for a pod never admitted.
  const mark = recordedChange(
    'annotation',
    ADMITTED_ANNOTATION,
    oldPod.metadata?.annotations,
    newPod.metadata?.annotations,
  );
  if (mark) return mark;
  // istio-cni's record of the pod's ambient capture: only istio-cni's node agent on the pod's node may change it.
  const redirection = redirectionChange(oldPod, newPod, { username: requester, node: requesterNode }, cfg);
  if (redirection) return { ok: false, ...redirection };
  const before = checkPosture({ pod: oldPod, ...ctx }, nodes, cfg);
  // A pod meshgate never admitted as meshed (created before its namespace opted in) is not made worse by any update.
  const meshed = meshContainers(oldPod, cfg);
  if (!before.ok && meshed.length === 0) return { ok: true, reason: 'ok' };
  for (const m of meshed) {
    const now = newPod.spec[m.list]?.[m.index];
    if (!now || !sameJson(now, m.container)) {
      return {
        ok: false,
        reason: 'mesh_container_changed',
        message:
          `the update changes ${m.container.name} (${describeChange(m.container, now)}); ` +
          "the mesh's containers cannot change after the pod is created",
      };
    }
  }
  const targeting = targetsMeshContainer(oldPod, newPod, meshed);
  if (targeting) return targeting;
  for (const [kind, keys, get] of [
    ['annotation', RECORDED_ANNOTATIONS, (p: Pod) => p.metadata?.annotations],
    ['label', RECORDED_LABELS, (p: Pod) => p.metadata?.labels],
  ] as const) {
    for (const key of keys) {
      const changed = recordedChange(kind, key, get(oldPod), get(newPod));
      if (changed) return changed;
    }
  }
  const after = checkPosture({ pod: newPod, ...ctx }, nodes, cfg);
  if (!after.ok && (before.ok || before.reason !== after.reason))
    return { ok: false, reason: after.reason, message: `after this update: ${after.message}` };
  return { ok: true, reason: 'ok' };
}

/**
 * An ephemeral container added with `targetContainerName` naming a mesh container (`kubectl debug --target=istio-proxy`)
 * shares that container's process namespace: as the proxy's UID or as root it reaches the proxy's processes and,
 * through /proc, its files and the socket that hands out the workload's keys. Refused for everyone: an ephemeral
 * container cannot be removed again; access.debuggers debug the proxy with kubectl exec (src/policy/validate/access.ts).
 */
function targetsMeshContainer(oldPod: Pod, newPod: Pod, meshed: readonly MeshContainer[]): UpdateResult | undefined {
  const names = new Set(meshed.map((m) => m.container.name));
  const before = new Set((oldPod.spec.ephemeralContainers ?? []).map((c) => c.name));
  for (const c of newPod.spec.ephemeralContainers ?? []) {
    if (before.has(c.name) || c.targetContainerName === undefined || !names.has(c.targetContainerName)) continue;
    return {
      ok: false,
      reason: 'mesh_container_access',
      message:
        `ephemeral container ${c.name} targets ${c.targetContainerName}, a mesh container: it would share its ` +
        "processes and, through them, its files and the workload's keys; debug the proxy with kubectl exec as one " +
        'of access.debuggers instead',
    };
  }
  return undefined;
}

function recordedChange(
  kind: 'annotation' | 'label',
  key: string,
  old: Readonly<Record<string, string>> | undefined,
  now: Readonly<Record<string, string>> | undefined,
): UpdateResult | undefined {
  const was = old?.[key];
  const is = now?.[key];
  if (was === is) return undefined;
  return {
    ok: false,
    reason: 'mesh_metadata_changed',
    message:
      `the update changes ${kind} ${key} (${JSON.stringify(was ?? null)} → ${JSON.stringify(is ?? null)}); ` +
      'it records how the pod is meshed and cannot change',
  };
}

function describeChange(was: MeshContainer['container'], now: MeshContainer['container'] | undefined): string {
  if (!now) return 'it would be gone';
  if (was.image !== now.image) return `image ${was.image} → ${now.image}`;
  return 'its spec differs';
}
