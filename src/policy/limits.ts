/**
 * Bounds on what one review may cost meshgate. The apiserver accepts pods of up to ~1.5 MiB (etcd's request limit),
 * and most of meshgate's work is constant per pod; the one part that grows with the pod is the node requirement it
 * ANDs into every required node-selector term (one op per term). 120,000 empty terms made a 36 MB patch.
 */

/**
 * The scheduler ORs a pod's node-selector terms; real pods carry a handful. 64 leaves room for generated
 * affinities and keeps the patch under ~8 KB of affinity ops.
 */
export const MAX_NODE_SELECTOR_TERMS = 64;

/** Far above any real patch (about a dozen ops plus one per term): a ceiling for whatever the builders emit. */
export const MAX_PATCH_OPS = 256;

export function nodeSelectorTermCount(spec: {
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: unknown[] } } };
}): number {
  return spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.length ?? 0;
}
