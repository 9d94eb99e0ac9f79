/**
 * The one shape of a reason code's record (STYLE.md 21, issue 35): what the code means, what to do about it, which
 * component decides it and where an operator reads it. Every family of codes under src/contract/codes/ is a
 * `Record<code, ReasonEntry>` declared `as const`, so the union of a family's codes is its `keyof`, and the sentence
 * lookups (REASONS, CNI_REASONS, NODE_REASONS, describeReason), the fix lookups (adviceFor, cniAdviceFor) and
 * docs/reasons.md are all derived from it (src/contract/codes/index.ts lists the families). A code is unique within
 * its family; the same word in two families is two codes (the validator's `redirect_missing` is a probe that did not
 * reach it, the webhook's a pod without a redirect). Codes never change once shipped: dashboards, alerts, Event
 * field selectors and other versions' readers key on them.
 */

/**
 * Who decides a code: the component an operator looks at when it shows. The pure policy core (src/policy,
 * src/policy/mutate, src/policy/ambient, src/mark) runs in both webhook handlers, and in `meshgate explain` and `check --pre`.
 */
export const EMITTERS = {
  mutate: "the webhook's mutating handler (/mutate)",
  validate: "the webhook's validating handlers (pods, workload templates, bindings, exec and attach)",
  webhook: "the webhook process outside a pod's decision: its transport and its cache of node verdicts",
  'node-agent': "the node agent (DaemonSet), judging its node's CNI chain",
  guard: "the node agent's proxy-identity guard",
  'nri-plugin': "meshgate's NRI plugin in containerd",
  validator: 'the validation init container in each pod (`meshgate validate-redirect`, `validate-ambient`)',
  repair: 'the repair controller',
  check: '`meshgate check`',
} as const;

export type Emitter = keyof typeof EMITTERS;

/** Where an operator reads a code. */
export const SURFACES = {
  'admission-message':
    "the admission answer's message, as `[code]` at its end, and its audit annotation meshgate.io/reason",
  event: 'a Kubernetes Event: its reason, or `[code]` in its message',
  'node-condition': "the reason of the Node's MeshCNIVerified condition",
  'metric-label': 'a label value of a meshgate_* metric (docs/metrics.md)',
  'check-report': "`meshgate check` items (and `check-node`'s, `check --pre`'s, `check --audit`'s)",
  'policy-report': "the namespace's wgpolicyk8s.io PolicyReport `meshgate`",
  'container-status':
    "the pod's container status: the validator's termination message, the runtime's CreateContainerError",
  explain: '`meshgate explain` and `meshgate inject`',
} as const;

export type Surface = keyof typeof SURFACES;

export interface ReasonEntry {
  /** What happened, one readable sentence: reused verbatim in messages, logs, Events and docs. */
  readonly meaning: string;
  /** What the workload's owner or the operator changes so it does not happen; absent where nobody needs to act. */
  readonly fix?: string;
  readonly emitters: readonly Emitter[];
  readonly shows: readonly Surface[];
}

/** A family of codes: each code once, with its record. */
export type Codes = Readonly<Record<string, ReasonEntry>>;

/** A family's codes, in declaration order. */
export function codesOf<C extends Codes>(family: C): readonly (keyof C & string)[] {
  return Object.freeze(Object.keys(family)) as readonly (keyof C & string)[];
}

/** Each code's meaning: the sentence lookup messages are built from. */
export function meaningsOf<C extends Codes>(family: C): { readonly [K in keyof C]: C[K]['meaning'] } {
  return Object.freeze(Object.fromEntries(Object.entries(family).map(([code, e]) => [code, e.meaning]))) as {
    readonly [K in keyof C]: C[K]['meaning'];
  };
}

/** Each code's fix, for the codes that have one. */
export function fixesOf<C extends Codes>(family: C): { readonly [K in keyof C]?: string } {
  return Object.freeze(
    Object.fromEntries(Object.entries(family).flatMap(([code, e]) => (e.fix === undefined ? [] : [[code, e.fix]]))),
  ) as { readonly [K in keyof C]?: string };
}

/** Every code of the family has a fix (the type says so: `satisfies Record<string, ReasonEntry & { fix: string }>`). */
export function allFixesOf<C extends Readonly<Record<string, ReasonEntry & { readonly fix: string }>>>(
  family: C,
): { readonly [K in keyof C]: string } {
  return fixesOf(family) as { readonly [K in keyof C]: string };
}

/** Whether `value` is a code of the family (a code read from a Node, a pod or another version may not be). */
export function isCodeOf<C extends Codes>(family: C, value: unknown): value is keyof C & string {
  return typeof value === 'string' && Object.hasOwn(family, value);
}

// The sets of surfaces most codes share, named once so each entry says which it has.

/** A pod refused (or, below enforce, admitted and recorded): the answer, its count, the MeshWouldDeny Event, the
 * namespace's PolicyReport, `meshgate check` and `explain`. */
export const REFUSAL = [
  'admission-message',
  'metric-label',
  'event',
  'policy-report',
  'check-report',
  'explain',
] as const satisfies readonly Surface[];

/** A request refused outright (its object, an update, a binding, an access): the answer and its count. */
export const ANSWER = ['admission-message', 'metric-label'] as const satisfies readonly Surface[];

/** A pod admitted as it is or with a patch: its count and `meshgate explain`. */
export const ADMITTED = ['metric-label', 'explain'] as const satisfies readonly Surface[];

/** A redirect mode chosen: its count, `meshgate explain` and `check --pre`'s pods that would be adjusted. */
export const MODE = ['metric-label', 'explain', 'check-report'] as const satisfies readonly Surface[];
