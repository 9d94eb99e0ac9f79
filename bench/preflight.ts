/**
 * Before any load: every body of every route is sent once over HTTPS with the server's CA enforced
 * (rejectUnauthorized, servername localhost), and each answer is checked — status 200, uid echoed, allowed,
 * and on /mutate a patch that applies cleanly to the pod. This proves the certificate chain (autocannon itself
 * cannot verify it) and that the load phases measure the intended path, not an error path. A review answered
 * allowed: false is not a transport failure: it is returned as a finding (the load keeps sending it).
 */
import { request } from 'node:https';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { Review } from './corpus.ts';

interface ReviewAnswer {
  response?: { uid?: string; allowed?: boolean; patch?: string; status?: { message?: string } };
}

export function post(
  url: string,
  ca: string,
  path: string,
  body: string,
  servername = 'localhost',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      {
        method: 'POST',
        ca,
        servername,
        rejectUnauthorized: true,
        headers: { 'content-type': 'application/json' },
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${path}: no answer within 10 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export interface PreflightResult {
  checked: number;
  patched: number;
  /** Reviews answered allowed: false, with the server's message. */
  denied: Array<{ uid: string; message: string }>;
}

/** Counts patched and denied answers; throws on the first transport-level failure. */
export async function preflight(
  url: string,
  ca: string,
  path: string,
  reviews: Review[],
  servername = 'localhost',
): Promise<PreflightResult> {
  let patched = 0;
  const denied: PreflightResult['denied'] = [];
  for (const review of reviews) {
    const res = await post(url, ca, path, JSON.stringify(review), servername);
    const body = JSON.parse(res.text) as ReviewAnswer;
    const what = `${path} uid ${review.request.uid}`;
    if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status}: ${res.text.slice(0, 200)}`);
    if (body.response?.uid !== review.request.uid) throw new Error(`${what}: uid not echoed`);
    if (body.response.allowed !== true)
      denied.push({ uid: review.request.uid, message: body.response.status?.message ?? '' });
    if (body.response.patch) {
      const ops = JSON.parse(Buffer.from(body.response.patch, 'base64').toString('utf8')) as Operation[];
      jsonpatch.applyPatch(structuredClone(review.request.object), ops, true, false);
      patched++;
    }
  }
  return { checked: reviews.length, patched, denied };
}
