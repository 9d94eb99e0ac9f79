/**
 * The in-process cost of one corpus review (bench/in-process.ts's loops) measured on the code of another checkout,
 * for before/after figures in one run: `node bench/in-process-tree.ts ROOT REVIEWS.json VERIFIED_NODES_CSV MESH`
 * imports the handler, the encoder and the test config from ROOT (a tree extracted from a git ref, see
 * bench/trees.ts) and prints one JSON line: the InProcess figures of that tree.
 */
import { pathToFileURL } from 'node:url';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InProcess } from './in-process.ts';
import { nsPerCall, round } from './stats.ts';

type Req = { uid: string };
const [root, reviewsFile, nodesCsv, mesh = 'custom'] = process.argv.slice(2);
const from = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(root, rel)).href)) as T;
const { mutate } = await from<{ mutate: (r: Req, deps: unknown) => unknown }>('src/admission/mutate.ts');
const { encodeResponse, serializeResponse } = await from<{
  encodeResponse: (v: string, uid: string, verdict: unknown) => unknown;
  serializeResponse: (b: unknown) => string;
}>('src/admission/review.ts');
// Trees from before test/support/config.ts built their bench config with buildConfig({}, 'bench'), as their bench did.
const testConfig = existsSync(join(root, 'test/support/config.ts'))
  ? (await from<{ testConfig: (mesh: string) => unknown }>('test/support/config.ts')).testConfig
  : (
      (build) => () =>
        build({}, 'bench')
    )((await from<{ buildConfig: (o: unknown, src: string) => unknown }>('src/config/load.ts')).buildConfig);
const { nodeFactsFromState } = await from<{ nodeFactsFromState: (s: unknown, src: string) => unknown }>(
  'src/facts/node-state.ts',
);

const nodes = Object.fromEntries(
  nodesCsv
    .split(',')
    .filter(Boolean)
    .map((n) => [n, { verified: true, kubeletVersion: 'v1.34.1' }]),
);
const deps = { config: testConfig(mesh), nodes: nodeFactsFromState({ nodes }, 'bench') };
const requests = (JSON.parse(readFileSync(reviewsFile, 'utf8')) as Array<{ request: Req }>).map((r) => r.request);
const loops = 7;
const perLoop = 50_000;
const bestUs = (fn: (r: Req) => unknown, n = loops) =>
  round(nsPerCall((i) => fn(requests[i % requests.length]), perLoop, n) / 1000, 2);
const answer = (r: Req) => serializeResponse(encodeResponse('admission.k8s.io/v1', r.uid, mutate(r, deps)));
const echo = (r: Req) =>
  serializeResponse(encodeResponse('admission.k8s.io/v1', r.uid, { kind: 'allow', reason: 'echo' }));
bestUs(answer, 2); // warm-up: compile (and, in trees that have them, fill the caches)
const result: InProcess = {
  reviews: requests.length,
  mutateUs: bestUs((r) => mutate(r, deps)),
  mutateAndAnswerUs: bestUs(answer),
  echoAnswerUs: bestUs(echo),
  loops,
};
console.log(JSON.stringify(result));
