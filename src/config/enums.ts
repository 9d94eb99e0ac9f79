/**
 * The configuration's enumerations and the limits the code shares with the declaration: plain values, so the daemons
 * read them without the schema library.
 */

export const REDIRECT_MODES = ['auto', 'required', 'off'] as const;
export const ON_UNVERIFIED_NODE = ['reject', 'validate'] as const;
export const NATIVE_SIDECAR_MODES = ['auto', 'on', 'off'] as const;
/**
 * Who decides that no container but the mesh's can run as or become the proxy (src/policy/escalation.ts, docs/security.md
 * "Who can become the proxy"): `node` (default) refuses at admission only what the spec itself states and leaves what
 * only the node can see (an image's USER, the runtime's capabilities, set-user-ID binaries) to the node side;
 * `restricted` demands at admission that every container provably cannot; `baseline` refuses only the explicit proxy
 * UID/GID.
 */
export const APP_PRIVILEGES = ['node', 'restricted', 'baseline'] as const;
/** Where Istio's proxy UID/GID come from (src/mesh/istio-openshift.ts): the config, or each namespace's OpenShift range. */
export const PROXY_IDS_FROM = ['config', 'openshift'] as const;
/**
 * How much of what meshgate decides is enforced in a namespace (src/admission/level.ts): `enforce` refuses,
 * `warn` admits with an admission warning, `audit` admits and records. Ordered from the strictest.
 */
export const ENFORCEMENT_LEVELS = ['enforce', 'warn', 'audit'] as const;
/**
 * The most enablement selectors meshgate takes, configured (schema.ts maxItems) or learned (policy/ambient/learn.ts): Istio's
 * chart ships two; a cluster needing dozens has a different problem than meshgate can check per pod.
 */
export const MAX_ENABLEMENT_SELECTORS = 16;
