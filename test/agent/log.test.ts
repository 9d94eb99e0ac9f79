// The node agent's JSON-lines log (src/agent/log.ts) writes the lines the daemons' pino logger (src/log/logger.ts)
// writes for the same call: string levels, ISO times, errors as `err` objects — one format for log pipelines.
import { describe, expect, it } from 'vitest';
import { jsonLineLog } from '../../src/agent/log.ts';
import { createLogger } from '../../src/log/logger.ts';
import { errorFields } from '../../src/log/fields.ts';
import { KubeApiError } from '../../src/kube/errors.ts';
import { ISO_TIME } from '../log/logs.ts';

type Level = 'info' | 'warn' | 'error';

/** The line each logger writes for one call, parsed. */
function bothLines(level: Level, obj: object, msg: string) {
  const ours: string[] = [];
  const theirs: string[] = [];
  jsonLineLog({ node: 'n1' }, (l) => ours.push(l))[level](obj, msg);
  createLogger({ base: { node: 'n1' } }, { write: (l: string) => theirs.push(l) })[level](obj, msg);
  expect(ours).toHaveLength(1);
  expect(theirs).toHaveLength(1);
  expect(ours[0].endsWith('\n')).toBe(true);
  return { ours: JSON.parse(ours[0]), theirs: JSON.parse(theirs[0]) };
}

describe('jsonLineLog', () => {
  it.each([
    ['info', { verdict: 'verified', runtime: 'containerd://2.0.5' }, 'published'],
    ['warn', { err: errorFields(new KubeApiError(409, 'Conflict', 'the object has been modified')) }, 'retry'],
    ['error', { why: 'publish', err: errorFields(new TypeError('x is undefined')), retryInMs: 500 }, 'failed'],
  ] as const)('a %s line: the same keys, in the same order, with the same values as pino writes', (level, obj, msg) => {
    const { ours, theirs } = bothLines(level, obj, msg);
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect({ ...ours, time: 0 }).toEqual({ ...theirs, time: 0 });
    expect(ours.level).toBe(level);
    expect(ours.time).toMatch(ISO_TIME);
  });

  it('an Error in err: its type, message and stack, as pino serializes it', () => {
    const { ours, theirs } = bothLines('error', { err: new RangeError('boom') }, 'bug');
    expect(ours.err).toEqual(theirs.err);
    expect(ours.err).toMatchObject({ type: 'RangeError', message: 'boom' });
    expect(ours.err.stack).toContain('boom');
  });

  it('an API error as fields: code and reason as a pipeline filters them', () => {
    const err = errorFields(new KubeApiError(403, 'Forbidden', 'nodes "n1" is forbidden'));
    const { ours } = bothLines('error', { err }, 'failed');
    expect(ours.err).toEqual({
      type: 'KubeApiError',
      code: 403,
      reason: 'Forbidden',
      message: 'nodes "n1" is forbidden',
    });
  });
});
