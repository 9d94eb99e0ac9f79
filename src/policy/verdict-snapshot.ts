/**
 * A judgement's input as the verdict cache (verdict-cache.ts) keeps it, and the test of a live input against it.
 *
 * The copy is flat: one array of tokens written in JSON's order (members in order, what JSON leaves out left out),
 * with the strings of the input's keys and values in it. A live input is the one copied when walking it consumes the
 * tokens to the end, each value equal: the answer JSON would give, without writing the live input's JSON. Measured
 * against the JSON key string this replaces (docs/benchmarks.md §1, "Third pass"): ~2.5 vs ~6.6 µs per istio-proxy
 * in a warm loop, and 5–6 % less CPU per companion review on the compiled server under load in two alternating runs
 * of 10–12 rounds. A tree of small objects compared the same way was as cheap in the loop and no cheaper under load,
 * where its objects are cold; the flat array is read in order.
 *
 * Nothing here can answer "same" for inputs JSON would write differently: every token is compared, counts included;
 * anything JSON would write otherwise than it is (a non-finite number, an undefined item, an inherited member) is a
 * difference, so a miss, never a wrong verdict.
 */
import type { Compiled } from '../config/compile.ts';
import type { ContainerList } from '../contract/pod.ts';
import type { Role } from '../mesh/types.ts';
import { isObject } from '../util/json.ts';
import type { JudgementInput } from './verdict-input.ts';

/** Tags: an object (its member count follows), a list (its length follows), a number (it follows), a scalar. */
const OBJ = -1;
const ARR = -2;
const NUM = -3;
const TRUE = -4;
const FALSE = -5;
const NULL = -6;

/** Tags, counts and numbers as numbers; any string is a member's name or a string value, as its place says. */
type Tokens = Array<string | number>;

/** `v` written into `t` as JSON.stringify would write it. */
function write(v: unknown, t: Tokens): void {
  if (typeof v === 'string') t.push(v);
  else if (typeof v === 'number') {
    if (Number.isFinite(v)) t.push(NUM, v);
    else t.push(NULL);
  } else if (v === true) t.push(TRUE);
  else if (v === false) t.push(FALSE);
  else if (v === null || typeof v !== 'object') t.push(NULL);
  else if (Array.isArray(v)) {
    t.push(ARR, v.length);
    for (const x of v) write(x, t);
  } else {
    const at = t.length;
    t.push(OBJ, 0);
    let n = 0;
    for (const k of Object.keys(v)) {
      const x: unknown = (v as Record<string, unknown>)[k];
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      t.push(k);
      write(x, t);
      n++;
    }
    t[at + 1] = n;
  }
}

/** Where live `v` ends in `t` if it is the value written there from `p`, else -1. */
function match(t: Tokens, p: number, v: unknown): number {
  const x = t[p];
  if (typeof x === 'string') return x === v ? p + 1 : -1;
  switch (x) {
    case OBJ: {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return -1;
      const n = t[p + 1];
      let at = p + 2;
      let i = 0;
      // for-in also walks inherited enumerable members, which JSON leaves out and no copy holds: a miss at worst.
      for (const k in v) {
        const y: unknown = (v as Record<string, unknown>)[k];
        if (y === undefined) continue;
        if (i === n || t[at] !== k) return -1;
        at = match(t, at + 1, y);
        if (at < 0) return -1;
        i++;
      }
      return i === n ? at : -1;
    }
    case ARR: {
      if (!Array.isArray(v) || v.length !== t[p + 1]) return -1;
      let at = p + 2;
      for (let i = 0; i < v.length; i++) {
        at = match(t, at, v[i]);
        if (at < 0) return -1;
      }
      return at;
    }
    case NUM:
      return v === t[p + 1] ? p + 2 : -1;
    case TRUE:
      return v === true ? p + 1 : -1;
    case FALSE:
      return v === false ? p + 1 : -1;
    default:
      return v === null ? p + 1 : -1;
  }
}

/** A judgement's input as kept: the configuration by serial, the rest as tokens. */
export interface InputSnapshot {
  readonly serial: number;
  readonly role: Role;
  readonly list: ContainerList;
  readonly first: boolean;
  readonly tokens: Tokens;
}

/**
 * The parts of an input compared as JSON, in the order compared: the container first, where two workloads' inputs
 * differ (their proxies' environment), then the volumes, the same for most. `undefined` parts of the view are null,
 * which the judgements treat alike (no ServiceAccount name, no gateway, no capabilities).
 */
const jsonPartsOf = (j: JudgementInput) => [
  j.container,
  j.volumes,
  j.serviceAccountName ?? null,
  j.gateway ?? null,
  j.appCapabilities ?? null,
];

/** The configurations judgements were made under, by identity (a new configuration, e.g. learned images, is another). */
const serials = new WeakMap<Compiled, number>();
let nextSerial = 0;
function serialOf(cfg: Compiled): number {
  let n = serials.get(cfg);
  if (n === undefined) {
    n = nextSerial++;
    serials.set(cfg, n);
  }
  return n;
}

/**
 * A snapshot of `j` and the characters of its JSON (what the cache's size is counted in), or undefined when that is
 * over `maxChars` (no copy is made of an input too large to keep).
 */
export function snapshotOf(
  j: JudgementInput,
  maxChars: number,
): { snapshot: InputSnapshot; chars: number } | undefined {
  const parts = jsonPartsOf(j);
  const chars = JSON.stringify(parts).length;
  if (chars > maxChars) return undefined;
  const tokens: Tokens = [];
  write(parts, tokens);
  return { snapshot: { serial: serialOf(j.cfg), role: j.role, list: j.list, first: j.first, tokens }, chars };
}

/** Whether `j` is the input `s` was taken of. */
export function sameInput(s: InputSnapshot, j: JudgementInput): boolean {
  return (
    s.serial === serialOf(j.cfg) &&
    s.role === j.role &&
    s.list === j.list &&
    s.first === j.first &&
    match(s.tokens, 0, jsonPartsOf(j)) === s.tokens.length
  );
}

/** A few characters of `s` and its length, as a number: where two strings of a kind differ, as a rule. */
const sampled = (s: string): number =>
  s.length === 0 ? 0 : (s.length * 31 + s.charCodeAt(s.length >> 1)) * 31 + s.charCodeAt(s.length - 1);

/**
 * Which snapshots are worth comparing with `j`: a number from its role and place, and a few lengths and characters
 * of its container (image, arguments, environment values, mounts) and ServiceAccount. Only an index: entries under
 * one fingerprint are compared whole, so a fingerprint that said nothing would cost time, never a wrong verdict (the
 * tests use one for all). On the bench's 46 Istio-injected pods, 1.4 comparisons per verdict reused.
 */
export function fingerprint(j: JudgementInput): number {
  const c = j.container as Record<string, unknown>;
  let n = (j.role.length * 31 + j.list.length) * 2 + (j.first ? 1 : 0);
  n = n * 31 + (typeof c.image === 'string' ? c.image.length : -1);
  const args = c.args;
  if (Array.isArray(args)) for (const a of args) n = (n * 31 + (typeof a === 'string' ? sampled(a) : -1)) | 0;
  n = n * 31 + (Array.isArray(c.volumeMounts) ? c.volumeMounts.length : -1);
  n = n * 31 + j.volumes.length;
  n = (n * 31 + (typeof j.serviceAccountName === 'string' ? sampled(j.serviceAccountName) : -1)) | 0;
  const env = c.env;
  if (Array.isArray(env)) {
    n = n * 31 + env.length;
    for (const e of env) {
      const v = isObject(e) ? e.value : undefined;
      n = (n * 31 + (typeof v === 'string' ? sampled(v) : -1)) | 0;
    }
  }
  return n | 0;
}
