/**
 * Part 2: pathological pods through the pure core (`decide`) and through the handler plus encoding (`mutate`
 * + `encodeResponse`), median of N runs each, at 1×, 2× and 4× size. A third column adds the transport's
 * JSON work done in-process (parse the request, stringify the response), which is what grows with pod size:
 * meshgate builds its ops directly, so its own work should stay flat.
 *
 * Then crafted reviews (bench/crafted.ts), each aimed at one parser or loop of the admission path, in CPU ms per
 * review through both webhooks (runCrafted): the slowest is the figure issue 21 §4 targets (≤ 50 ms).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { repoRoot } from '../test/e2e/harness/binaries.ts';
import { decide } from '../src/policy/mutate/decide.ts';
import { mutate, type MutateDeps } from '../src/admission/mutate.ts';
import { decodeReview, encodeResponse, type AdmissionRequest } from '../src/admission/review.ts';
import type { Pod } from '../src/contract/pod.ts';
import { podReview } from './corpus.ts';
import type { CraftedRow } from './crafted.ts';
import { PATHOLOGICAL } from './pods.ts';
import { round, timeMedianMs } from './stats.ts';

export const TARGET_MS = 5;
const SCALES = [1, 2, 4] as const;
/** Runs per median: many for the sub-0.1 ms core (its medians are otherwise noise), fewer with the JSON work. */
export const RUNS = { core: 201, withJson: 31 };

export interface PathoRow {
  shape: string;
  scale: number;
  requestKiB: number;
  patchBytes: number;
  decision: string;
  decideMs: number;
  handlerMs: number;
  /** JSON.parse of the body + decode + mutate + encode + JSON.stringify of the response. */
  inProcessMs: number;
}

export interface PathoShape {
  shape: string;
  rows: PathoRow[];
  /** handler+encoding time at 2× and 4× over 1× (linear growth = 2 and 4; flat = 1). */
  handlerRatio: { x2: number; x4: number };
  inProcessRatio: { x2: number; x4: number };
  pass: boolean;
}

function measure(shape: string, scale: number, deps: MutateDeps): PathoRow {
  const pod = PATHOLOGICAL[shape](scale);
  const review = podReview(`patho-${scale}`, pod, 'shop');
  const request = review.request as unknown as AdmissionRequest;
  const body = JSON.stringify(review);
  const verdict = mutate(request, deps);
  if (verdict.kind !== 'patch')
    throw new Error(`${shape} ×${scale}: expected a patch, got ${verdict.kind} ${verdict.reason}`);
  // The patch must apply (untimed); op values are shared, frozen templates, so the pod gets copies.
  jsonpatch.applyPatch(structuredClone(pod), structuredClone(verdict.ops) as Operation[], true, false);
  const input = { pod: pod as unknown as Pod, namespace: 'shop' };
  return {
    shape,
    scale,
    requestKiB: round(Buffer.byteLength(body) / 1024, 1),
    patchBytes: Buffer.byteLength(JSON.stringify(verdict.ops)),
    decision: `${verdict.kind}:${verdict.reason}`,
    decideMs: timeMedianMs(() => decide(input, deps.nodes, deps.config), RUNS.core, 20),
    handlerMs: timeMedianMs(() => encodeResponse(review.apiVersion, request.uid, mutate(request, deps)), RUNS.core, 20),
    inProcessMs: timeMedianMs(() => {
      const decoded = decodeReview(JSON.parse(body));
      if (!decoded.ok) throw new Error(decoded.error);
      const r = decoded.review.request;
      return JSON.stringify(encodeResponse(decoded.review.apiVersion, r.uid, mutate(r, deps)));
    }, RUNS.withJson),
  };
}

export function runPathological(deps: MutateDeps): PathoShape[] {
  return Object.keys(PATHOLOGICAL).map((shape) => {
    const rows = SCALES.map((scale) => measure(shape, scale, deps));
    const ratio = (k: 'handlerMs' | 'inProcessMs') => ({
      x2: round(rows[1][k] / rows[0][k]),
      x4: round(rows[2][k] / rows[0][k]),
    });
    return {
      shape,
      rows,
      handlerRatio: ratio('handlerMs'),
      inProcessRatio: ratio('inProcessMs'),
      pass: rows[0].decideMs < TARGET_MS && rows[0].handlerMs < TARGET_MS,
    };
  });
}

/** Issue 21 §4: no crafted review may hold the event loop longer than this, in CPU ms on this machine kind. */
export const CRAFTED_TARGET_MS = 50;

/**
 * The crafted reviews (bench/crafted.ts) through the code of `root` (this checkout by default, or a tree extracted
 * from a git ref), in a child process of their own with the heap collected before each measure
 * (bench/crafted-tree.ts).
 */
export function runCrafted(root = repoRoot): CraftedRow[] {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', fileURLToPath(new URL('./crafted-tree.ts', import.meta.url)), root],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as CraftedRow);
}

/** What a crafted review costs: the costlier of its two webhooks, parse to answer. */
export function craftedMs(row: CraftedRow): number {
  return Math.max(row.mutate?.reviewMs ?? 0, row.validate.reviewMs);
}

export function slowestCrafted(rows: CraftedRow[]): { name: string; ms: number; pass: boolean } {
  const worst = rows.reduce((a, b) => (craftedMs(b) > craftedMs(a) ? b : a));
  const ms = craftedMs(worst);
  return { name: worst.name, ms, pass: ms <= CRAFTED_TARGET_MS };
}
