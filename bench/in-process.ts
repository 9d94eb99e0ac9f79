/**
 * Part 2b: what one corpus review costs in-process, without the transport: the handler (`mutate`) and the
 * answer (`encodeResponse` + `serializeResponse`), against the echo's answer. Best of several loops over every
 * corpus body, so it reads the code's cost on a warm CPU; the server under load pays several times this (cold
 * caches, a CPU shared with the load generator), which part 1 measures.
 */
import { mutate, type MutateDeps } from '../src/admission/mutate.ts';
import { encodeResponse, serializeResponse, type AdmissionRequest } from '../src/admission/review.ts';
import type { Review } from './corpus.ts';
import { nsPerCall, round } from './stats.ts';

export interface InProcess {
  reviews: number;
  /** µs per review, best of `loops` loops over all bodies. */
  mutateUs: number;
  mutateAndAnswerUs: number;
  echoAnswerUs: number;
  loops: number;
}

/** µs per call of `fn` over the requests in turn, best of `loops` loops (stats.ts: nsPerCall). */
function bestUs(
  requests: AdmissionRequest[],
  perLoop: number,
  loops: number,
  fn: (r: AdmissionRequest) => unknown,
): number {
  return round(nsPerCall((i) => fn(requests[i % requests.length]), perLoop, loops) / 1000, 2);
}

export function measureInProcess(reviews: Review[], deps: MutateDeps, loops = 7, perLoop = 50_000): InProcess {
  // Fresh parses, as the server gets them.
  const requests = reviews.map((r) => (JSON.parse(JSON.stringify(r)) as Review).request as unknown as AdmissionRequest);
  const answer = (r: AdmissionRequest) =>
    serializeResponse(encodeResponse('admission.k8s.io/v1', r.uid, mutate(r, deps)));
  const echo = (r: AdmissionRequest) =>
    serializeResponse(encodeResponse('admission.k8s.io/v1', r.uid, { kind: 'allow', reason: 'ok' }));
  bestUs(requests, perLoop, 2, answer); // warm-up: compile and fill the caches
  return {
    reviews: requests.length,
    mutateUs: bestUs(requests, perLoop, loops, (r) => mutate(r, deps)),
    mutateAndAnswerUs: bestUs(requests, perLoop, loops, answer),
    echoAnswerUs: bestUs(requests, perLoop, loops, echo),
    loops,
  };
}
