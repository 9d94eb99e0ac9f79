/**
 * Meshgate issue 11, item 5: amplified reviews sent many at once must cost a bounded amount. The server runs in
 * its own process with the V8 heap node gives a 512 MiB container (the chart's limit: 256 MiB old space, 1 MiB
 * semi-spaces, 259 MiB in all, read off node in a 512 MiB memory cgroup), and the default transport limits.
 * Each run: every client gets an answer (a decided review, 429, or 413 for a body with more objects than meshgate
 * parses), the server lives, its peak RSS stays under the 512 MiB limit, and the byte budget still lets a big
 * body through; last, the worst the limits allow together: 1,000 connections held open while the most costly
 * parsable 7 MiB bodies arrive. Figures are printed; to compare with a
 * 512 MiB cgroup and with older commits, see measure-amplification.ts.
 */
import { describe, it, expect, afterEach } from 'vitest';
import { startServerChild, type ServerChild } from './child.ts';
import { MAX_JSON_CONTAINERS } from '../../src/server/json-shape.ts';
import { describeFlood, flood, holdConnections, termsFitting, termsReview } from './amplification.ts';

const MiB = 1024 * 1024;
/** The heap node 24 sizes for itself in a 512 MiB container. */
const CONTAINER_HEAP = ['--max-old-space-size=256', '--max-semi-space-size=1'];

const children: ServerChild[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.stop()));
});

/** The worst a body can be and still be parsed: just under the cap on objects and arrays, zeros to 7 MiB. */
const WORST_PARSED = termsReview('amp', MAX_JSON_CONTAINERS - 1000, 7 * MiB - 1024);

const scenarios = [
  {
    name: "the issue's review (120,000 empty terms, 360 KB)",
    body: termsReview('amp', 120_000),
    held: 0,
    decided: true,
  },
  // Refused before parsing (413): more objects than MAX_JSON_CONTAINERS.
  {
    name: 'a 7 MiB body of empty terms (2.4 million)',
    body: termsReview('amp', termsFitting(7 * MiB - 1024)),
    held: 0,
    decided: false,
  },
  {
    name: 'a 7 MiB body parsed at the worst (199,000 empty terms, 3.4 million zeros)',
    body: WORST_PARSED,
    held: 0,
    decided: true,
  },
  // Under maxConnections (1024) with room for the flood's own connections.
  {
    name: 'the worst parsed 7 MiB body, with 1,000 idle TLS connections held',
    body: WORST_PARSED,
    held: 1000,
    decided: true,
  },
];

describe('amplified reviews at once', () => {
  for (const s of scenarios) {
    for (const n of s.held ? [6, 20] : [6, 32]) {
      it(`${n} × ${s.name}: all answered, server alive, peak RSS under 512 MiB`, async () => {
        const child = await startServerChild({}, { execArgv: CONTAINER_HEAP });
        children.push(child);
        const release = await holdConnections(child, s.held);
        const r = await flood(child, n, s.body);
        release();
        console.log(`[amplification] ${describeFlood(`${n} × ${s.name}`, r)}`);

        expect(r.died).toBeNull();
        expect(Object.values(r.outcomes).reduce((a, b) => a + b, 0)).toBe(n);
        for (const key of Object.keys(r.outcomes))
          expect(key).toMatch(s.decided ? /^(200 [a-z_]+|429)$/ : /^(413|429)$/);
        // Refusing everything for the byte budget would be bounded too; at least one body of the burst must get
        // through it and be decided (or, over the object cap, refused for its shape).
        expect(Object.keys(r.outcomes).some((k) => (s.decided ? k.startsWith('200') : k === '413'))).toBe(true);
        expect(r.peakRss).toBeLessThan(512 * MiB);
      }, 120_000);
    }
  }
});
