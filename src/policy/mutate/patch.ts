/**
 * JSON Patch operations built directly from what is added or removed (RFC 6902). Never a diff of whole pods:
 * diffing is quadratic in pod size (Istio's and controller-runtime's multi-second injections of pods with many
 * env vars). Each builder knows whether its parent exists, since `add` into a missing object fails.
 */
import type { Pod, Container } from '../../contract/pod.ts';
import { preEncode } from '../../util/base64-json.ts';
import type { DeepReadonly } from '../../util/readonly.ts';
import { escapePointer, type PatchOp } from '../../contract/patch.ts';
import { NODE_VERIFIED_LABEL, REDIRECT_LABEL, STATUS_ANNOTATION } from '../../contract/names.ts';
import { termRequiresLabel } from '../target-node.ts';

const FIELD_PATHS = { labels: '/metadata/labels', annotations: '/metadata/annotations' } as const;

/** Pointers to the entries meshgate sets on every pod it patches, escaped once instead of per review. */
const OWN_ENTRY_PATHS: Readonly<Record<'labels' | 'annotations', ReadonlyMap<string, string>>> = {
  labels: new Map([[REDIRECT_LABEL, `${FIELD_PATHS.labels}/${escapePointer(REDIRECT_LABEL)}`]]),
  annotations: new Map([[STATUS_ANNOTATION, `${FIELD_PATHS.annotations}/${escapePointer(STATUS_ANNOTATION)}`]]),
};

/**
 * Sets string entries of metadata.labels and metadata.annotations, creating metadata or either map when
 * absent (one op per missing parent, so two maps never race to create the same parent).
 */
export function setMetadataEntries(
  pod: Pod,
  entries: Partial<Record<'labels' | 'annotations', Record<string, string>>>,
): PatchOp[] {
  const meta = pod.metadata;
  if (!meta) return [{ op: 'add', path: '/metadata', value: entries }];
  const ops: PatchOp[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const want = entries[field];
    if (!want) continue;
    const existing = meta[field];
    if (!existing) {
      ops.push({ op: 'add', path: FIELD_PATHS[field], value: want });
      continue;
    }
    // `add` on an existing member replaces it (RFC 6902 §4.1), so one op shape serves both cases.
    for (const key in want)
      if (existing[key] !== want[key])
        ops.push({
          op: 'add',
          path: OWN_ENTRY_PATHS[field].get(key) ?? `${FIELD_PATHS[field]}/${escapePointer(key)}`,
          value: want[key],
        });
  }
  return ops;
}

/**
 * Inserts containers at the front of spec.initContainers, in the given order; the list returned is new. The
 * containers may be the compiled, frozen templates: a patch only carries them to the encoder, which never writes.
 */
export function prependInitContainers(pod: Pod, containers: ReadonlyArray<DeepReadonly<Container>>, at = 0): PatchOp[] {
  if (containers.length === 0) return [];
  if (!pod.spec.initContainers || (pod.spec.initContainers.length === 0 && at === 0)) {
    return [{ op: pod.spec.initContainers ? 'replace' : 'add', path: '/spec/initContainers', value: containers }];
  }
  return containers.map((c, i) => ({ op: 'add', path: `/spec/initContainers/${at + i}`, value: c }));
}

export function appendContainer(c: DeepReadonly<Container>): PatchOp {
  return { op: 'add', path: '/spec/containers/-', value: c };
}

export function removeInitContainer(index: number): PatchOp {
  return { op: 'remove', path: `/spec/initContainers/${index}` };
}

export function appendVolumes(pod: Pod, volumes: ReadonlyArray<{ name: string }>): PatchOp[] {
  if (volumes.length === 0) return [];
  if (!pod.spec.volumes) return [{ op: 'add', path: '/spec/volumes', value: volumes }];
  return volumes.map((v) => ({ op: 'add', path: '/spec/volumes/-', value: v }));
}

/**
 * Adds the image pull secrets the pod does not list yet (config validator.imagePullSecrets, with the validator
 * meshgate injects): the whole list when the pod has none, else one append per missing name. The pod's own stay.
 */
export function addImagePullSecrets(pod: Pod, names: readonly string[]): PatchOp[] {
  if (names.length === 0) return [];
  const have = pod.spec.imagePullSecrets;
  if (!have) return [{ op: 'add', path: '/spec/imagePullSecrets', value: names.map((name) => ({ name })) }];
  return names
    .filter((name) => !have.some((s) => s.name === name))
    .map((name) => ({ op: 'add', path: '/spec/imagePullSecrets/-', value: { name } }));
}

/** What requireNodeLabel adds, at each depth the pod may lack (a few small objects). */
function requirement(key: string, value: string) {
  const expr = { key, operator: 'In', values: [value] };
  const fresh = { nodeSelectorTerms: [{ matchExpressions: [expr] }] };
  const nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution: fresh };
  return { expr, fresh, terms: fresh.nodeSelectorTerms, nodeAffinity, affinity: { nodeAffinity } };
}

/**
 * The requirement meshgate adds to nearly every CNI-mode pod (meshgate.io/cni-verified=true), built once and
 * pre-encoded, so a patch copies its JSON instead of serialising it (half of the per-review encoding otherwise).
 */
const VERIFIED_NODE = (() => {
  const r = requirement(NODE_VERIFIED_LABEL, 'true');
  return {
    expr: preEncode(r.expr),
    fresh: preEncode(r.fresh),
    terms: preEncode(r.terms),
    nodeAffinity: preEncode(r.nodeAffinity),
    affinity: preEncode(r.affinity),
  };
})();

/**
 * Requires a node label for scheduling. Node selector terms are ORed and expressions within a term ANDed, so
 * the requirement is added to every existing term; with no terms, one term holding only it is created.
 */
export function requireNodeLabel(pod: Pod, key: string, value: string): PatchOp[] {
  const {
    expr,
    fresh,
    terms: freshTerms,
    nodeAffinity,
    affinity: freshAffinity,
  } = key === NODE_VERIFIED_LABEL && value === 'true' ? VERIFIED_NODE : requirement(key, value);
  const affinity = pod.spec.affinity;
  const required = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!affinity) return [{ op: 'add', path: '/spec/affinity', value: freshAffinity }];
  if (!affinity.nodeAffinity) return [{ op: 'add', path: '/spec/affinity/nodeAffinity', value: nodeAffinity }];
  const base = '/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution';
  if (!required) return [{ op: 'add', path: base, value: fresh }];
  const terms = required.nodeSelectorTerms;
  if (!terms || terms.length === 0)
    return [{ op: terms ? 'replace' : 'add', path: `${base}/nodeSelectorTerms`, value: freshTerms }];
  const ops: PatchOp[] = [];
  terms.forEach((term, i) => {
    if (termRequiresLabel(term, key, value)) return;
    ops.push(
      term.matchExpressions
        ? { op: 'add', path: `${base}/nodeSelectorTerms/${i}/matchExpressions/-`, value: expr }
        : { op: 'add', path: `${base}/nodeSelectorTerms/${i}/matchExpressions`, value: [expr] },
    );
  });
  return ops;
}
