/**
 * The JSON body parser (fastify's own, after json-shape.ts counts the containers): every poisoned body — literal or
 * written with \u escapes, at any depth — is refused with a 400, and nothing reaches Object.prototype.
 */
import { describe, expect, it } from 'vitest';
import { buildTestApp, podReview, post } from './helpers.ts';

const REVIEW = JSON.stringify(podReview('uid-poison'));
/** The review with `member` (raw JSON text, e.g. `"__proto__":{…}`) added first in request.object.metadata. */
function withMember(member: string): string {
  const text = REVIEW.replace('"metadata":{', `"metadata":{${member},`);
  if (text === REVIEW) throw new Error('podReview has no "metadata":{ to add a member to');
  return text;
}

describe('poisoned bodies through the app', () => {
  it.each([
    ['__proto__', '"__proto__":{"polluted":true}'],
    ['__proto__ with an escaped underscore', '"\\u005f_proto__":{"polluted":true}'],
    ['__proto__ with an escaped letter, upper-case hex', '"__pr\\u006Fto__":{"polluted":true}'],
    ['constructor.prototype', '"constructor":{"prototype":{"polluted":true}}'],
    ['constructor.prototype escaped', '"\\u0063onstructor":{"prototype":{"polluted":true}}'],
  ])('%s is refused with 400 and pollutes nothing', async (_name, member) => {
    const { app } = buildTestApp();
    const res = await post(app, '/mutate', withMember(member));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a poisoned key deep in a list is refused too', async () => {
    const { app } = buildTestApp();
    const deep = REVIEW.replace('"containers":[{', '"containers":[{"env":[{"name":"A","__proto__":{"x":1}}],');
    expect(deep).not.toBe(REVIEW);
    expect((await post(app, '/mutate', deep)).statusCode).toBe(400);
  });

  it('the words in values, and Go-escaped characters, are reviewed normally', async () => {
    const { app } = buildTestApp();
    for (const member of [
      '"annotations":{"note":"constructor __proto__"}',
      '"annotations":{"cmd":"a \\u0026\\u0026 b"}',
    ]) {
      const res = await post(app, '/mutate', withMember(member));
      expect(res.statusCode).toBe(200);
      expect(res.json().response.uid).toBe('uid-poison');
    }
  });
});
