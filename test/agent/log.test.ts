// The node agent's JSON-lines log (src/agent/log.ts): pino's line format, so log pipelines read it like the
// webhook's and the repair controller's pino lines.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { jsonLineLog } from '../../src/agent/log.ts';

function capture(make: (write: (line: string) => void) => { info(o: object, m: string): void }) {
  const lines: string[] = [];
  make((l) => lines.push(l)).info({ verdict: 'verified', err: new Error('boom') }, 'published');
  return lines;
}

describe('jsonLineLog', () => {
  it('writes one JSON object per line with the fields pino writes for the same call', () => {
    const ours = capture((write) => jsonLineLog({ node: 'n1' }, write));
    const theirs = capture((write) => pino({ base: { node: 'n1' } }, { write }));
    expect(ours).toHaveLength(1);
    expect(ours[0].endsWith('\n')).toBe(true);
    const a = JSON.parse(ours[0]);
    const b = JSON.parse(theirs[0]);
    expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
    expect({ ...a, time: 0, err: 0 }).toEqual({ ...b, time: 0, err: 0 });
    expect(a.err).toBe('boom');
    expect(typeof a.time).toBe('number');
  });

  it("uses pino's level numbers", () => {
    const lines: string[] = [];
    const log = jsonLineLog({}, (l) => lines.push(l));
    log.info({}, 'i');
    log.warn({}, 'w');
    log.error({}, 'e');
    expect(lines.map((l) => JSON.parse(l).level)).toEqual([30, 40, 50]);
  });
});
