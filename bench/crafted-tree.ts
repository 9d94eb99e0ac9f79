/**
 * The crafted reviews (bench/crafted.ts) through the admission path of the code in ROOT, CPU time per review:
 * `node --expose-gc bench/crafted-tree.ts ROOT [NAME]` imports the handlers, the encoder and the test config from
 * ROOT (this checkout, or a tree extracted from a git ref: bench/compare/tree.ts), so before/after figures come from
 * the same inputs in one run. Prints one JSON line per review (CraftedRow); NAME: that review alone.
 *
 * Per review and webhook (mutate for a CREATE; validate for a CREATE and an UPDATE), process.cpuUsage around
 *   handler  mutate(request) or validate(request): the pod parser, then decide / checkPosture / checkUpdate;
 *   review   the server's body checks and parse (checkShape, plainJson), decodeReview, the handler,
 *            encodeResponse and serializeResponse: what one review holds the event loop for once its bytes are in.
 * A first run that takes a second or more is the figure (a second run of a review that takes seconds says nothing
 * new); otherwise, after three more to warm the code up as a serving process has it, the median of five. The heap
 * is collected before each timed run.
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { craftedReviews, type CraftedRow, type CraftedTiming } from './crafted.ts';
import { median, round } from './stats.ts';

type Req = { uid: string; operation: string };
type VerdictLike = { kind: string; reason: string };

const root = process.argv[2];
const only = process.argv[3];
const from = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(root, rel)).href)) as T;
const { mutate } = await from<{ mutate: (r: Req, deps: unknown) => VerdictLike }>('src/admission/mutate.ts');
const { validate } = await from<{ validate: (r: Req, deps: unknown) => Promise<VerdictLike> }>(
  'src/admission/validate.ts',
);
const review = await from<{
  decodeReview: (b: unknown) => { ok: true; review: { apiVersion: string; request: Req } } | { ok: false };
  encodeResponse: (v: string, uid: string, verdict: unknown) => unknown;
  serializeResponse: (b: unknown) => string;
}>('src/admission/review.ts');
/** The server's own body checks and parser (src/server: json-shape.ts, json-body.ts), or JSON.parse in trees without them. */
type BodyParts = {
  checkShape?: (text: string) => Error | null;
  plainJson?: (text: string) => unknown;
  NEEDS_CHECKED_PARSE?: symbol;
};
const none = (): BodyParts => ({});
const shapeCheck = await from<BodyParts>('src/server/json-shape.ts').catch(none);
const bodyParser = await from<BodyParts>('src/server/json-body.ts').catch(none);
function parseBody(text: string): unknown {
  if (shapeCheck.checkShape?.(text)) throw new Error('crafted review refused by the body shape check');
  const v = bodyParser.plainJson ? bodyParser.plainJson(text) : JSON.parse(text);
  // A body that may hold a poisoned key takes fastify's parser in the server; none of the crafted ones does.
  if (v === bodyParser.NEEDS_CHECKED_PARSE) throw new Error('crafted review needs the checked parser');
  return v;
}
const { testConfig } = await from<{ testConfig: (mesh: string) => unknown }>('test/support/config.ts');
const { nodeFactsFromState } = await from<{ nodeFactsFromState: (s: unknown, src: string) => unknown }>(
  'src/facts/node-state.ts',
);
const nodes = nodeFactsFromState({ nodes: { good: { verified: true, kubeletVersion: 'v1.34.1' } } }, 'bench');
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** CPU time of `fn`, awaited: nothing else runs in this process, so only its own work is counted. */
async function cpuMs(fn: () => unknown): Promise<number> {
  gc();
  const start = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

/** A run of a second or more is the figure; else three more warm up the code and the median of five is. */
async function measured(fn: () => unknown): Promise<number> {
  const first = await cpuMs(fn);
  if (first >= 1000) return round(first, 1);
  for (let i = 0; i < 3; i++) await cpuMs(fn);
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) runs.push(await cpuMs(fn));
  return round(median(runs), 2);
}

async function timing(body: string, handle: (r: Req) => VerdictLike | Promise<VerdictLike>): Promise<CraftedTiming> {
  const request = (JSON.parse(body) as { request: Req }).request;
  let verdict: VerdictLike | undefined;
  let answer = '';
  const handlerMs = await measured(async () => {
    verdict = await handle(request);
  });
  const reviewMs = await measured(async () => {
    const decoded = review.decodeReview(parseBody(body));
    if (!decoded.ok) throw new Error('crafted review does not decode');
    const r = decoded.review.request;
    const v = await handle(r);
    answer = review.serializeResponse(review.encodeResponse(decoded.review.apiVersion, r.uid, v));
  });
  return {
    decision: verdict ? `${verdict.kind}:${verdict.reason}` : '?',
    handlerMs,
    reviewMs,
    answerBytes: Buffer.byteLength(answer),
  };
}

for (const c of craftedReviews()) {
  if (only && c.name !== only) continue;
  const deps = { config: testConfig(c.mesh), nodes };
  const body = JSON.stringify(c.review);
  const create = (c.review.request as { operation: string }).operation === 'CREATE';
  const row: CraftedRow = {
    name: c.name,
    mesh: c.mesh,
    requestKiB: round(Buffer.byteLength(body) / 1024, 0),
    mutate: create ? await timing(body, (r) => mutate(r, deps)) : undefined,
    validate: await timing(body, (r) => validate(r, deps)),
  };
  console.log(JSON.stringify(row));
}
