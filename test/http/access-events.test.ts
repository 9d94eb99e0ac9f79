/**
 * The webhook posts an Event on the pod for each access to a mesh container (src/server/access-events.ts): after the
 * answer, one at a time, a bounded queue that drops (and counts) past its size, a failed post counted and skipped.
 */
import { describe, expect, it } from 'vitest';
import type { AccessRecord } from '../../src/admission/access.ts';
import { accessEvents } from '../../src/server/access-events.ts';

const record = (pod: string): AccessRecord => ({
  request: { kind: 'exec', namespace: 'shop', pod, container: 'istio-proxy', command: ['sh'], username: 'bob' },
  outcome: 'refused',
  level: 'enforce',
  reason: 'mesh_container_access',
});

describe('access Events', () => {
  it('posts each record in order, one at a time', async () => {
    const posted: string[] = [];
    let inFlight = 0;
    let most = 0;
    const sink = accessEvents(async (a) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setImmediate(r));
      posted.push(a.request.pod);
      inFlight--;
    });
    for (const p of ['a', 'b', 'c']) sink.record(record(p));
    await sink.idle();
    expect(posted).toEqual(['a', 'b', 'c']);
    expect(most).toBe(1);
    expect(sink.stats).toEqual({ posted: 3, failed: 0, dropped: 0 });
  });

  it('drops past its bound and goes on after a failed post', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const sink = accessEvents(
      async (a) => {
        await gate;
        if (a.request.pod === 'p1') throw new Error('403');
      },
      undefined,
      3,
    );
    // p0 is taken at once; p1..p3 wait (3 = the bound); p4 and p5 are dropped.
    for (let i = 0; i < 6; i++) sink.record(record(`p${i}`));
    release();
    await sink.idle();
    expect(sink.stats).toEqual({ posted: 3, failed: 1, dropped: 2 });
  });
});
