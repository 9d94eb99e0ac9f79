/**
 * The cap on objects and arrays in one body (src/server/json-shape.ts): the count itself (strings skipped,
 * escapes honoured) as a table, and through the app: a large body over the cap is 413 with a message naming the
 * cap, one just under it is parsed and decided, braces inside strings do not count.
 */
import { describe, it, expect } from 'vitest';
import { countContainers, MAX_JSON_CONTAINERS } from '../../src/server/json-shape.ts';
import { buildTestApp, post, podReview, type ReviewResponse } from './helpers.ts';

describe('countContainers', () => {
  it.each<[string, string, number]>([
    ['scalars', '1', 0],
    ['one object', '{}', 1],
    ['nested', '{"a":[{"b":[]}],"c":{}}', 5],
    ['braces inside a string', '{"a":"{[{[}]"}', 1],
    ['an escaped quote inside a string', '{"a":"x\\"{[","b":[]}', 2],
    ['an escaped backslash before the closing quote', '{"a":"x\\\\","b":[]}', 2],
    ['three backslashes then a quote (escaped)', '["\\\\\\"[", {}]', 2],
    ['an unterminated string', '[{"a":"{{{{', 2],
  ])('%s', (_name, text, want) => {
    expect(countContainers(text, 100)).toBe(want);
  });

  it('stops counting one past the limit', () => {
    expect(countContainers(`[${'{},'.repeat(1000)}{}]`, 10)).toBe(11);
  });
});

/** A pod review with `terms` empty node-selector terms. */
function withTerms(uid: string, terms: number): string {
  const spec = {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: Array.from({ length: terms }, () => ({})),
        },
      },
    },
  };
  return JSON.stringify(podReview(uid, spec));
}

describe('through the app', () => {
  it('a body with more objects and arrays than the cap is 413 and names the cap', async () => {
    const { app } = buildTestApp();
    const res = await post(app, '/mutate', withTerms('over', MAX_JSON_CONTAINERS));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({
      error: 'too_many_json_values',
      message: expect.stringContaining(`more than ${MAX_JSON_CONTAINERS} JSON objects and arrays`),
    });
  });

  it('one just under the cap is parsed and decided (policy refuses that many terms with its own reason)', async () => {
    const { app } = buildTestApp();
    // The review's own objects and arrays (request, kind, metadata, spec, containers, …) count too.
    const res = await post(app, '/mutate', withTerms('under', MAX_JSON_CONTAINERS - 100));
    expect(res.statusCode).toBe(200);
    expect((res.json() as ReviewResponse).response.uid).toBe('under');
  });

  it('braces inside strings are not counted', async () => {
    const { app } = buildTestApp();
    const review = podReview('strings');
    (review.request.object as { metadata: Record<string, unknown> }).metadata.annotations = {
      blob: '{['.repeat(MAX_JSON_CONTAINERS),
    };
    const res = await post(app, '/mutate', review);
    expect(res.statusCode).toBe(200);
  });
});
