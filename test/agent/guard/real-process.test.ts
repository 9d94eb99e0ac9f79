// The guard against this machine's real procfs and a real process (as root, as the tier runs): a process placed in a
// cgroup named as the kubelet names a pod's container (cgroupfs driver), which switches to UID 1337 with setpriv, is
// found in the real /proc, killed by a real SIGKILL and its pod deleted; the same process under another UID is left
// alone. The real-node tier (S9) shows the same against kubelet, containerd and runc.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProxyGuard } from '../../../src/agent/guard/guard.ts';
import { guardOf } from '../../../src/agent/guard/pods.ts';
import { scanProcesses } from '../../../src/agent/guard/scan.ts';
import { cid, guardedPod, istioView } from './fake-node.ts';

/** cgroup v1's pids hierarchy where mounted (this machine kind), else the v2 root. */
const HIERARCHY = existsSync('/sys/fs/cgroup/pids/cgroup.procs') ? '/sys/fs/cgroup/pids' : '/sys/fs/cgroup';
const silent = { info() {}, warn() {}, error() {} };

const made: string[] = [];
let serial = 0;
const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(
    children.splice(0).map((c) =>
      c.exitCode !== null || c.signalCode !== null
        ? undefined
        : new Promise((r) => {
            c.once('exit', r);
            c.kill('SIGKILL');
          }),
    ),
  );
  for (const dir of made.splice(0).reverse()) rmdirSync(dir);
});

/** Starts `sh` in the pod container's cgroup, then execs `setpriv --reuid/--regid <id> sleep 60` there. */
async function containerProcess(podUid: string, container: string, id: number): Promise<ChildProcess> {
  const top = join(HIERARCHY, `mg-guard-test-${process.pid}-${++serial}-${Date.now()}`);
  const dirs = [top, join(top, 'kubepods'), join(top, 'kubepods', `pod${podUid}`)];
  dirs.push(join(dirs[2], cid(podUid, container)));
  for (const d of dirs) mkdirSync(d);
  made.push(...dirs);
  const procs = join(dirs[3], 'cgroup.procs');
  const child = spawn(
    'sh',
    ['-c', `echo $$ > ${procs} && exec setpriv --reuid=${id} --regid=${id} --clear-groups sleep 60`],
    { stdio: 'ignore' },
  );
  children.push(child);
  // Wait until it runs as `id` inside the cgroup (the exec happened).
  for (let i = 0; i < 100; i++) {
    const seen = scanProcesses('/proc', (o) => o.podUid === podUid);
    const t = seen.containers.get(cid(podUid, container))?.[0]?.threads[0];
    if (t?.ids.uids[1] === id) return child;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the test process did not start as ${id} in ${dirs[3]}`);
}

describe('the guard on real processes', () => {
  it('kills a process of a guarded pod that runs as 1337 and deletes the pod; spares one running as 1000', async () => {
    const bad = '33333333-3333-4333-8333-333333333333';
    const good = '44444444-4444-4444-8444-444444444444';
    const victim = await containerProcess(bad, 'app', 1337);
    const bystander = await containerProcess(good, 'app', 1000);
    const exited = new Promise<NodeJS.Signals | null>((r) => victim.once('exit', (_code, signal) => r(signal)));
    const pods = new Map(
      [bad, good].map((u) => {
        const g = guardOf(guardedPod(u, [{ name: 'istio-proxy' }, { name: 'app' }]), istioView);
        if (!g) throw new Error('not guarded');
        return [u, g] as const;
      }),
    );
    const deleted: string[] = [];
    const guard = new ProxyGuard(1000, {
      pods: { current: () => pods },
      actions: { deletePod: async (p) => void deleted.push(p.uid), event: async () => {} },
      log: silent,
      scan: (w) => scanProcesses('/proc', w),
    });
    const found = await guard.pass();
    expect(found.map((f) => [f.pod.uid, f.kind])).toEqual([[bad, 'running']]);
    expect(found[0].message).toMatch(/ran as UID 1337 \(real, effective, saved, filesystem\) in pid \d+/);
    expect(await exited).toBe('SIGKILL');
    expect(deleted).toEqual([bad]);
    expect(bystander.exitCode).toBeNull();
    expect(bystander.signalCode).toBeNull();
  });
});
