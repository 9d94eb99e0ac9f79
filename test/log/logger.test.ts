/**
 * The daemons' log format (issue 24): string levels, ISO timestamps, errors as structured fields. Lines are parsed
 * as a log pipeline would; API errors are the daemons' own client's (src/kube/api) and the CLI's client's real
 * ApiException, as its HTTP layer throws it.
 */
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { describeKubeError, KubeApiError, KubeTransportError } from '../../src/kube/errors.ts';
import { errorFields } from '../../src/log/fields.ts';
import { ISO_TIME, memoryLogger } from './logs.ts';

const STATUS_409 = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message: 'pods "web-1" already exists',
  reason: 'AlreadyExists',
  details: { name: 'web-1', kind: 'pods' },
  code: 409,
});
const apiError = (code: number, body: unknown) =>
  new ApiException(code, 'Unknown API Status Code!', body, { 'content-type': 'application/json' });

describe('createLogger', () => {
  it('writes levels as strings and times as ISO 8601 UTC', () => {
    const { logger, lines } = memoryLogger({ level: 'debug' });
    const before = Date.now();
    logger.debug('d');
    logger.info({ a: 1 }, 'i');
    logger.warn('w');
    logger.error('e');
    expect(lines.map((l) => l.level)).toEqual(['debug', 'info', 'warn', 'error']);
    for (const l of lines) {
      expect(l.time).toMatch(ISO_TIME);
      expect(Date.parse(l.time)).toBeGreaterThanOrEqual(before - 1000);
    }
    expect(lines[1]).toMatchObject({ a: 1, msg: 'i', pid: process.pid });
  });

  it('honours the level, and a base replaces pid and hostname', () => {
    const { logger, lines } = memoryLogger({ level: 'warn', base: { node: 'worker-1' } });
    logger.info('dropped');
    logger.warn('kept');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', node: 'worker-1', msg: 'kept' });
    expect(lines[0]).not.toHaveProperty('pid');
  });
});

describe('errors as log fields', () => {
  it('an API error: HTTP code, Status reason and message; no escaped JSON anywhere in the line', () => {
    const err = apiError(409, STATUS_409);
    // What logging err.message used to put in the line: the Status body and headers as escaped JSON.
    expect(err.message).toContain('\\"reason\\":\\"AlreadyExists\\"');
    const { logger, lines, raw } = memoryLogger();
    logger.error({ action: 'delete', err: errorFields(err) }, 'repair call failed');
    expect(lines[0].err).toEqual({
      type: 'ApiException',
      code: 409,
      reason: 'AlreadyExists',
      message: 'pods "web-1" already exists',
    });
    expect(raw[0]).not.toMatch(/\\"(kind|reason|apiVersion|content-type)\\"/);
    expect(describeKubeError(err)).toBe('409 AlreadyExists: pods "web-1" already exists');
  });

  it.each([
    ['a body already parsed', apiError(403, JSON.parse(STATUS_409.replace('AlreadyExists', 'Forbidden')))],
    ['a body that is not a Status', apiError(502, '<html>bad gateway</html>')],
    ['no body', apiError(500, undefined)],
  ])('an API error with %s', (_n, err) => {
    const f = errorFields(err);
    expect(f).toMatchObject({ type: 'ApiException', code: err.code });
    expect(f.message).not.toContain('HTTP-Code');
    expect(f.message).not.toContain('Headers');
  });

  it("the daemons' client: an API error's Status reason and message, a transport error's system code", () => {
    const conflict = new KubeApiError(409, 'AlreadyExists', 'pods "web-1" already exists');
    expect(errorFields(conflict)).toEqual({
      type: 'KubeApiError',
      code: 409,
      reason: 'AlreadyExists',
      message: 'pods "web-1" already exists',
    });
    expect(describeKubeError(conflict)).toBe('409 AlreadyExists: pods "web-1" already exists');
    // No Status in the answer (a proxy's 502): no reason, the HTTP status as the message.
    expect(errorFields(new KubeApiError(502, '', ''))).toEqual({
      type: 'KubeApiError',
      code: 502,
      message: 'HTTP 502',
    });
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const refused = new KubeTransportError('GET /api/v1/nodes: connect ECONNREFUSED 127.0.0.1:6443', false, cause);
    expect(errorFields(refused)).toEqual({
      type: 'KubeTransportError',
      code: 'ECONNREFUSED',
      message: 'GET /api/v1/nodes: connect ECONNREFUSED 127.0.0.1:6443',
    });
    expect(describeKubeError(refused)).toBe(
      'KubeTransportError: GET /api/v1/nodes: connect ECONNREFUSED 127.0.0.1:6443',
    );
  });

  it('a network error keeps its system code; anything else its type and message', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    expect(errorFields(refused)).toEqual({
      type: 'Error',
      code: 'ECONNREFUSED',
      message: 'connect ECONNREFUSED 127.0.0.1:6443',
    });
    expect(errorFields(new TypeError('x is undefined'))).toEqual({ type: 'TypeError', message: 'x is undefined' });
    expect(errorFields('a string')).toEqual({ type: 'string', message: 'a string' });
    expect(describeKubeError(refused)).toBe('Error: connect ECONNREFUSED 127.0.0.1:6443');
  });
});
