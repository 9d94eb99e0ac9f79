/**
 * Prints what the amplified reviews of meshgate issue 11 cost the server: 6 and 32 at once, of the issue's
 * 360 KB review (120,000 empty node-selector terms), of a 7 MiB body of empty terms, and of the costliest 7 MiB
 * body that is still parsed (199,000 empty terms and zeros; also with 1,000 idle TLS connections held), each run
 * against a fresh server process. Not a test (test/http/amplification.test.ts asserts the outcomes); a measurement to
 * run before and after a change:
 *
 *   node test/http/measure-amplification.ts [--cgroup-mib 512]
 *
 * With --cgroup-mib (root, cgroup v1 or v2) the server runs in a memory cgroup of that limit, like the chart's
 * 512 MiB container: a run that outgrows it is OOM-killed, as a replica would be. To measure an older
 * commit, check it out in a worktree, copy test/http/{measure-amplification,amplification,child,server-child,
 * raw-post}.ts into it and run it there.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServerChild, type ServerChild } from './child.ts';
import { describeFlood, flood, holdConnections, termsFitting, termsReview } from './amplification.ts';

const MiB = 1024 * 1024;

interface Cgroup {
  procs: string;
  peak(): number;
  remove(): void;
}

/** A memory cgroup of `mib` MiB beside this process's own (cgroup v1 or v2). */
function memoryCgroup(mib: number, n: number): Cgroup {
  const lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  const v1 = lines.find((l) => l.split(':')[1]?.split(',').includes('memory'));
  const name = `meshgate-measure-${process.pid}-${n}`;
  const dir = v1
    ? join('/sys/fs/cgroup/memory', v1.split(':')[2], name)
    : join('/sys/fs/cgroup', lines.find((l) => l.startsWith('0::'))!.slice(3), name);
  mkdirSync(dir);
  writeFileSync(join(dir, v1 ? 'memory.limit_in_bytes' : 'memory.max'), String(mib * MiB));
  const peakFile = join(dir, v1 ? 'memory.max_usage_in_bytes' : 'memory.peak');
  return {
    procs: join(dir, 'cgroup.procs'),
    peak: () => (existsSync(peakFile) ? Number(readFileSync(peakFile, 'utf8')) : NaN),
    remove: () => rmdirSync(dir),
  };
}

const { values } = parseArgs({ options: { 'cgroup-mib': { type: 'string' } } });
const cgroupMib = values['cgroup-mib'] ? Number(values['cgroup-mib']) : undefined;

const worst = termsReview('amp', 199_000, 7 * MiB - 1024);
const scenarios = [
  { name: "issue's review (120,000 terms, 360 KB)", body: termsReview('amp', 120_000), held: 0 },
  { name: '7 MiB of empty terms', body: termsReview('amp', termsFitting(7 * MiB - 1024)), held: 0 },
  { name: '7 MiB: 199,000 empty terms and zeros', body: worst, held: 0 },
  { name: '7 MiB: 199,000 empty terms and zeros, 1,000 TLS connections held', body: worst, held: 1000 },
];

let runs = 0;
for (const s of scenarios) {
  for (const n of [6, 32]) {
    const cg = cgroupMib ? memoryCgroup(cgroupMib, runs++) : undefined;
    const child: ServerChild = await startServerChild({}, { cgroupProcs: cg?.procs });
    try {
      const release = await holdConnections(child, s.held);
      const r = await flood(child, n, s.body);
      release();
      const cgPeak = cg ? `, cgroup(${cgroupMib} MiB) peak ${(cg.peak() / MiB).toFixed(0)} MiB` : '';
      console.log(describeFlood(`${n} at once, ${s.name} (${(s.body.length / 1024).toFixed(0)} KB)`, r) + cgPeak);
    } finally {
      await child.stop();
      // The cgroup empties once the killed server is reaped.
      for (let i = 0; cg && i < 50; i++) {
        try {
          cg.remove();
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
  }
}
