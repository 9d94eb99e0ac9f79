/**
 * `npm run bench -- --guard`: what one pass of the node agent's proxy guard costs (src/agent/guard/), against this
 * machine's real /proc, as root. It starts CONTAINERS "containers" — cgroups named as the kubelet names a pod's
 * container (cgroupfs driver, v1 pids hierarchy or v2) — each holding one process with THREADS threads (a static C
 * helper, gcc), and times the guard's pass with all of them guarded (every thread's status read) beside a pass with
 * no pod guarded (the cgroup read of every process only) and the empty node (no read at all). Figures: the median and
 * the slowest of PASSES passes, and µs per thread read. The window the guard leaves is its interval plus one pass.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProxyGuard } from '../src/agent/guard/guard.ts';
import { guardOf } from '../src/agent/guard/pods.ts';
import { scanProcesses } from '../src/agent/guard/scan.ts';
import { cid, guardedPod, istioView } from '../test/agent/guard/fake-node.ts';

const CONTAINERS = 50;
const THREADS = 20;
const PASSES = 30;
const HIERARCHY = existsSync('/sys/fs/cgroup/pids/cgroup.procs') ? '/sys/fs/cgroup/pids' : '/sys/fs/cgroup';
const THREADS_C = `#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
static void *idle(void *a) { (void)a; for (;;) pause(); }
int main(int c, char **v) { int n = c > 1 ? atoi(v[1]) : 1; pthread_t t;
  for (int i = 1; i < n; i++) pthread_create(&t, 0, idle, 0); for (;;) pause(); }
`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function guardBench(log: (s: string) => void): Promise<Record<string, number>> {
  const work = mkdtempSync(join(tmpdir(), 'mg-guard-bench-'));
  writeFileSync(join(work, 'threads.c'), THREADS_C);
  execFileSync('gcc', ['-O2', '-static', '-pthread', '-o', join(work, 'threads'), join(work, 'threads.c')]);
  const top = join(HIERARCHY, `mg-guard-bench-${process.pid}`);
  const dirs: string[] = [top, join(top, 'kubepods')];
  const children: ChildProcess[] = [];
  const pods = new Map();
  mkdirSync(dirs[1], { recursive: true });
  try {
    for (let i = 0; i < CONTAINERS; i++) {
      const uid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const pod = join(dirs[1], `pod${uid}`);
      const ctr = join(pod, cid(uid, 'app'));
      mkdirSync(ctr, { recursive: true });
      dirs.push(pod, ctr);
      const child = spawn('sh', ['-c', `echo $$ > ${ctr}/cgroup.procs && exec ${work}/threads ${THREADS}`], {
        stdio: 'ignore',
      });
      children.push(child);
      pods.set(uid, guardOf(guardedPod(uid, [{ name: 'istio-proxy' }, { name: 'app' }]), istioView));
    }
    await new Promise((r) => setTimeout(r, 1000)); // every helper has started its threads
    const time = async (guarded: Map<string, unknown>) => {
      let threads = 0;
      const guard = new ProxyGuard(1000, {
        pods: { current: () => guarded as never },
        actions: { deletePod: async () => {}, event: async () => {} },
        log: { info() {}, warn() {}, error() {} },
        scan: (w) => {
          const s = scanProcesses('/proc', w);
          threads = s.threadsRead;
          return s;
        },
        kill: () => {},
      });
      const ms: number[] = [];
      for (let i = 0; i < PASSES; i++) {
        const t0 = performance.now();
        await guard.pass();
        ms.push(performance.now() - t0);
      }
      return { median: median(ms), max: Math.max(...ms), threads };
    };
    const all = await time(pods);
    const unguarded = await time(new Map([['not-on-this-node', pods.values().next().value]]));
    const empty = await time(new Map());
    const processes = scanProcesses('/proc', () => false).processes;
    log(`proxy guard, one pass over this machine's /proc (${processes} processes), ${PASSES} passes each:`);
    log(
      `  ${CONTAINERS} guarded containers × ${THREADS} threads (${all.threads} status reads): ` +
        `median ${all.median.toFixed(1)} ms, slowest ${all.max.toFixed(1)} ms, ` +
        `${((all.median * 1000) / Math.max(1, all.threads)).toFixed(0)} µs per thread`,
    );
    log(`  no guarded container on the node's processes (cgroup reads only): median ${unguarded.median.toFixed(1)} ms`);
    log(`  no guarded pod on the node (no read): median ${empty.median.toFixed(2)} ms`);
    return {
      processes,
      threads: all.threads,
      passMedianMs: all.median,
      passMaxMs: all.max,
      cgroupOnlyMedianMs: unguarded.median,
      emptyMedianMs: empty.median,
    };
  } finally {
    await Promise.all(
      children.map((c) =>
        c.exitCode !== null || c.signalCode !== null
          ? undefined
          : new Promise((r) => {
              c.once('exit', r);
              c.kill('SIGKILL');
            }),
      ),
    );
    for (const d of dirs.reverse()) rmdirSync(d);
    rmSync(work, { recursive: true, force: true });
  }
}
