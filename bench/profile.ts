/**
 * Summarises a V8 .cpuprofile (as written by `node --cpu-prof`): self time per function and per owner
 * (meshgate's src/, each npm package, Node's internals, GC, idle). Self time of a node = the sum of the
 * sampling intervals (timeDeltas) of the samples that landed in it.
 *   node bench/profile.ts bench/results/server-mutate.cpuprofile
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** meshgate's admission work (handlers, decision core, policy, facts), as opposed to transport and server glue. */
const ADMISSION_CODE = /\/src\/(admission|inject|policy|facts)\//;

interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Hot {
  name: string;
  where: string;
  owner: string;
  selfMs: number;
  /** Share of busy (non-idle) time. */
  pct: number;
}

export interface ProfileSummary {
  file: string;
  /** Whether only the samples inside the requested window were counted. */
  windowed: boolean;
  totalMs: number;
  busyMs: number;
  top: Hot[];
  /** Every function with self time (for perReviewDiff). */
  all: Hot[];
  owners: Array<{ owner: string; selfMs: number; pct: number }>;
  /** Share of busy time with a frame of meshgate's admission code (src/admission|inject|policy|facts) on the stack. */
  admissionInclusivePct: number;
}

/** Who owns a frame: "meshgate src/…" for our code, the npm package name, "node:internal", or V8's pseudo-frames. */
export function ownerOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native: bindings and builtins, e.g. TLS writes)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const ours = /\/(src|bench)\/([^/]+)\//.exec(url);
  if (ours) return `meshgate ${ours[1]}/${ours[2]}`;
  if (url.startsWith('node:')) return 'node (core)';
  return url;
}

function shortUrl(url: string): string {
  const m = /node_modules\/(.*)$/.exec(url) ?? /\/((?:src|bench)\/.*)$/.exec(url);
  return m ? m[1] : url.replace(/^file:\/\//, '');
}

/** `windowsUs`: count only samples taken inside one of these [from, to] (µs on the profile's monotonic clock). */
export function summarise(file: string, windowsUs?: Array<[number, number]>, topN = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const underAdmission = new Map<number, boolean>();
  const isUnder = (id: number): boolean => {
    let v = underAdmission.get(id);
    if (v === undefined) {
      const p = parent.get(id);
      v = ADMISSION_CODE.test(byId.get(id)!.callFrame.url) || (p !== undefined && isUnder(p));
      underAdmission.set(id, v);
    }
    return v;
  };
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (windowsUs && !windowsUs.some(([from, to]) => at >= from && at <= to)) continue;
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  }
  const fns = new Map<string, Hot>();
  const owners = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  let admissionUs = 0;
  for (const [id, us] of selfUs) {
    if (isUnder(id)) admissionUs += us;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const name = functionName || '(anonymous)';
    totalUs += us;
    if (name === '(idle)') idleUs += us;
    const owner = ownerOf(url, name);
    owners.set(owner, (owners.get(owner) ?? 0) + us);
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
    const key = `${name}@${where}`;
    const hot = fns.get(key) ?? { name, where, owner, selfMs: 0, pct: 0 };
    hot.selfMs += us / 1000;
    fns.set(key, hot);
  }
  const busyMs = (totalUs - idleUs) / 1000;
  const pct = (ms: number) => (busyMs > 0 ? (100 * ms) / busyMs : 0);
  const all = [...fns.values()].filter((h) => h.name !== '(idle)').sort((a, b) => b.selfMs - a.selfMs);
  for (const h of all) h.pct = pct(h.selfMs);
  const top = all.slice(0, topN);
  return {
    file,
    windowed: windowsUs !== undefined,
    totalMs: totalUs / 1000,
    busyMs,
    top,
    all,
    admissionInclusivePct: busyMs > 0 ? (100 * admissionUs) / 1000 / busyMs : 0,
    owners: [...owners]
      .filter(([o]) => o !== '(idle)')
      .map(([owner, us]) => ({ owner, selfMs: us / 1000, pct: pct(us / 1000) }))
      .sort((a, b) => b.selfMs - a.selfMs),
  };
}

export interface DiffRow {
  what: string;
  /** µs of server CPU per review in the baseline phase (A) and in the work phase (B), and B − A. */
  aUs: number;
  bUs: number;
  deltaUs: number;
}

/**
 * Where B's extra cost per review goes: self time per review by owner and by function, B − A, largest first.
 * Both summaries must come from the same profile (same process, same profiler overhead).
 */
export function perReviewDiff(
  a: ProfileSummary,
  aReviews: number,
  b: ProfileSummary,
  bReviews: number,
  n = 10,
): { owners: DiffRow[]; functions: DiffRow[]; busy: DiffRow } {
  const rows = (xs: Array<[string, number]>, ys: Array<[string, number]>): DiffRow[] => {
    const m = new Map<string, DiffRow>();
    const row = (k: string) => m.get(k) ?? m.set(k, { what: k, aUs: 0, bUs: 0, deltaUs: 0 }).get(k)!;
    for (const [k, ms] of xs) row(k).aUs += (ms * 1000) / aReviews;
    for (const [k, ms] of ys) row(k).bUs += (ms * 1000) / bReviews;
    for (const r of m.values()) r.deltaUs = r.bUs - r.aUs;
    return [...m.values()]
      .filter((r) => r.what !== '(idle)')
      .sort((p, q) => q.deltaUs - p.deltaUs)
      .slice(0, n);
  };
  const fn = (s: ProfileSummary) => s.all.map((h): [string, number] => [`${h.name}  ${h.where}`, h.selfMs]);
  const aBusy = (a.busyMs * 1000) / aReviews;
  const bBusy = (b.busyMs * 1000) / bReviews;
  return {
    owners: rows(
      a.owners.map((o) => [o.owner, o.selfMs]),
      b.owners.map((o) => [o.owner, o.selfMs]),
    ),
    functions: rows(fn(a), fn(b)),
    busy: { what: 'all busy time', aUs: aBusy, bUs: bBusy, deltaUs: bBusy - aBusy },
  };
}

export function formatDiff(d: ReturnType<typeof perReviewDiff>): string {
  const line = (r: DiffRow) =>
    `    ${r.aUs.toFixed(1).padStart(7)} ${r.bUs.toFixed(1).padStart(7)} ${(r.deltaUs >= 0 ? '+' : '') + r.deltaUs.toFixed(1).padStart(6)}  ${r.what}`;
  return [
    '  server CPU per review under the profiler, A (echo) vs B (mutate), same process: µs A, µs B, B − A',
    line(d.busy),
    '  by owner (largest increase first):',
    ...d.owners.map(line),
    '  by function (largest increase first):',
    ...d.functions.map(line),
  ].join('\n');
}

export function formatSummary(s: ProfileSummary, ownersN = 12): string {
  const what = s.windowed ? 'in the measured phases' : 'over the whole process';
  const lines = [
    `profile ${s.file}: ${(s.busyMs / 1000).toFixed(2)} s busy of ${(s.totalMs / 1000).toFixed(2)} s sampled ${what}`,
  ];
  lines.push(
    `  meshgate admission code on the stack (inclusive): ${s.admissionInclusivePct.toFixed(1)} % of busy time`,
  );
  lines.push('  self time by owner (share of busy time):');
  for (const o of s.owners.slice(0, ownersN)) lines.push(`    ${o.pct.toFixed(1).padStart(5)} %  ${o.owner}`);
  lines.push('  top functions by self time:');
  for (const h of s.top) lines.push(`    ${h.pct.toFixed(1).padStart(5)} %  ${h.name}  ${h.where}`);
  return lines.join('\n');
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/profile.ts FILE.cpuprofile');
    process.exit(2);
  }
  console.log(formatSummary(summarise(file, undefined, 20), 20));
}
