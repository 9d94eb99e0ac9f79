/**
 * Verdicts on mesh containers, reused (issue 35). Judging istio-proxy and istio-init field by field against their
 * contracts (src/policy/judge/) was ~70 % of a companion review's decision, and an injector writes the same containers
 * into every pod of a workload (its replicas, a Job's pods, a rollout), so the same judgement was made again and again.
 *
 * A verdict is reused only for the same input: everything the judgement can read (verdict-input.ts JudgementInput) —
 * the configuration it was made with (by identity), the role and list, the PodView (src/mesh/types.ts), which is all
 * of the pod a judgement is given, and the whole container. The judgement gets its PodView built from that input
 * (podViewOf), so what is compared covers what is judged. A field that differs, or the same container in another pod
 * view, is another input: judged afresh, never answered from a neighbour. Inputs are compared whole against a copy
 * taken when the verdict was made (verdict-snapshot.ts: no hash, so no collision to fear; another member order is
 * only a miss), and the copy is the cache's own: no later change to a pod object can alter it.
 *
 * The one name made up per pod, the ServiceAccount token volume's (`kube-api-access-<random>`, mounted into every
 * container present when the apiserver admits the pod, and by meshgate's patch into the mesh's), is renamed first
 * (verdict-input.ts renamed): the validating webhook, which sees every pod after its mutation, and the replicas of a
 * workload share their verdicts. A problem whose message quotes a name of that family, found on a renamed input, is
 * judged again on the real one, so that its message quotes the pod's own names.
 *
 * Finding the entry: a fingerprint of a few lengths and characters (verdict-snapshot.ts) picks at most
 * MAX_PER_FINGERPRINT entries, which are compared.
 *
 * Bounded: least recently used first out (in two segments, so inputs met once do not push out those met again), at
 * most MAX_ENTRIES verdicts and MAX_CHARS characters of their inputs' JSON; a container whose input is longer than
 * MAX_INPUT_CHARS is judged without the cache. Verdicts are frozen: one object is handed to every review that hits it.
 */
import type { RedirectSettings } from '../mesh/types.ts';
import { deepFreeze } from '../util/json.ts';
import { TOKEN_VOLUME_PREFIX } from '../pod/service-account-token.ts';
import { type JudgementInput, renamed } from './verdict-input.ts';
import { fingerprint, type InputSnapshot, sameInput, snapshotOf } from './verdict-snapshot.ts';

/** A role's judgement of one container: what identifyPod keeps of it. */
export type RoleVerdict =
  | { readonly problem: string }
  /** own: meshgate's own template (true) or the mesh's own container (false). */
  | { readonly own: boolean }
  /** The init container's, with what its arguments leave out of the redirect. */
  | { readonly own: boolean; readonly settings: RedirectSettings };

/** How a judgement is made: on the input it is given (the container and its PodView: podViewOf). */
export type Judge = (j: JudgementInput) => RoleVerdict;

/**
 * 1,024 verdicts: three roles per workload is hundreds of workloads rolling out at once; past that the least recently
 * used verdict is judged again when it is next needed.
 */
export const MAX_ENTRIES = 1024;
/** 2 Mi characters of inputs' JSON (~4 MiB of copies): ~500 inputs of istio-proxy (3–5 k each). */
export const MAX_CHARS = 2 * 1024 * 1024;
/** 32 Ki characters: ten times an injected istio-proxy; a larger container is judged every time. */
export const MAX_INPUT_CHARS = 32 * 1024;
/**
 * Entries compared per review at most: the most recently used ones under the same fingerprint. 32 comparisons that
 * stop where they differ: microseconds at worst.
 */
export const MAX_PER_FINGERPRINT = 32;

interface Entry {
  readonly fingerprint: number | string;
  readonly input: InputSnapshot;
  readonly chars: number;
  readonly verdict: RoleVerdict;
}

/**
 * Least recently used first out, in two segments (segmented LRU): a verdict made enters on probation, a small
 * segment of PROBATION_SHARE of the entries, and moves to the protected rest when it is used again. An input met
 * only once (a workload of one pod, a CronJob's run) passes through probation without pushing out the verdicts that
 * are used again and again (the replicas of a rollout).
 */
export const PROBATION_SHARE = 1 / 8;

type Segment = Map<Entry, true>;

export class VerdictCache {
  /** Each segment's entries, least recently used first (a Map keeps insertion order). */
  private readonly probation: Segment = new Map();
  private readonly protectedEntries: Segment = new Map();
  private readonly byFingerprint = new Map<number | string, Entry[]>();
  private chars = 0;
  /** Judgements answered from the cache and made; inputs whose token volume names were renamed: tests read them. */
  hits = 0;
  misses = 0;
  renamedInputs = 0;
  private readonly maxEntries: number;
  private readonly maxProbation: number;
  private readonly maxChars: number;
  private readonly fingerprintOf: (j: JudgementInput) => number | string;

  constructor(
    maxEntries = MAX_ENTRIES,
    maxChars = MAX_CHARS,
    fingerprintOf: (j: JudgementInput) => number | string = fingerprint,
  ) {
    this.maxEntries = maxEntries;
    this.maxProbation = Math.max(1, Math.floor(maxEntries * PROBATION_SHARE));
    this.maxChars = maxChars;
    this.fingerprintOf = fingerprintOf;
  }

  get size(): number {
    return this.probation.size + this.protectedEntries.size;
  }

  /** The verdict on `j`, from a judgement of the same input made before, or made now by `judge` (and kept). */
  verdict(j: JudgementInput, judge: Judge): RoleVerdict {
    const as = renamed(j);
    if (as === undefined) return this.lookup(j, judge);
    this.renamedInputs++;
    const v = this.lookup(as, judge);
    return 'problem' in v && v.problem.includes(TOKEN_VOLUME_PREFIX) ? judge(j) : v;
  }

  private lookup(j: JudgementInput, judge: Judge): RoleVerdict {
    const fp = this.fingerprintOf(j);
    const bucket = this.byFingerprint.get(fp);
    if (bucket) {
      for (let i = 0; i < bucket.length; i++) {
        const e = bucket[i];
        if (!sameInput(e.input, j)) continue;
        this.hits++;
        this.used(e);
        if (i > 0) {
          bucket.splice(i, 1);
          bucket.unshift(e);
        }
        return e.verdict;
      }
    }
    this.misses++;
    const verdict = deepFreeze(judge(j));
    const kept = snapshotOf(j, MAX_INPUT_CHARS);
    if (!kept) return verdict;
    const { snapshot, chars } = kept;
    const e: Entry = { fingerprint: fp, input: snapshot, chars, verdict };
    const list = bucket ?? [];
    if (!bucket) this.byFingerprint.set(fp, list);
    list.unshift(e);
    this.probation.set(e, true);
    this.chars += chars;
    if (list.length > MAX_PER_FINGERPRINT) this.drop(list[list.length - 1]);
    while (this.probation.size > this.maxProbation) this.drop(oldest(this.probation));
    while (this.chars > this.maxChars)
      this.drop(oldest(this.probation.size > 0 ? this.probation : this.protectedEntries));
    return verdict;
  }

  /** A hit: protected now (or again most recently used there); the protected segment's oldest goes on probation. */
  private used(e: Entry): void {
    if (this.probation.delete(e)) {
      this.protectedEntries.set(e, true);
      if (this.protectedEntries.size > this.maxEntries - this.maxProbation) {
        const demoted = oldest(this.protectedEntries);
        this.protectedEntries.delete(demoted);
        this.probation.set(demoted, true);
        while (this.probation.size > this.maxProbation) this.drop(oldest(this.probation));
      }
      return;
    }
    this.protectedEntries.delete(e);
    this.protectedEntries.set(e, true);
  }

  private drop(e: Entry): void {
    if (!this.probation.delete(e) && !this.protectedEntries.delete(e)) return;
    this.chars -= e.chars;
    const list = this.byFingerprint.get(e.fingerprint);
    if (!list) return;
    const i = list.indexOf(e);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.byFingerprint.delete(e.fingerprint);
  }
}

const oldest = (segment: Segment): Entry => segment.keys().next().value as Entry;
