// A node's processes for the guard's tests: a procfs tree on disk (pid/cgroup, pid/task/tid/status, as the kernel
// lays them out) and the pods the kubelet reports for them, so scanProcesses reads real files and the guard sees
// what a watch would deliver.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GuardPodFields } from '../../../src/agent/guard/pods.ts';
import { guardView } from '../../../src/agent/guard/start.ts';
import { configFromFlags } from '../../../src/config/load.ts';

export const istioView = guardView(configFromFlags({ mesh: 'istio' }));
export const linkerdView = guardView(configFromFlags({ mesh: 'linkerd' }));

/** A 64-hex container ID made from a pod's UID and a container's name. */
export const cid = (podUid: string, name: string) => createHash('sha256').update(`${podUid}/${name}`).digest('hex');

/** /proc/<pid>/status as the kernel writes it (the lines the guard reads, and some it does not). */
export function status(pid: number, uids: readonly number[], gids: readonly number[]): string {
  return [
    'Name:\tapp',
    'Umask:\t0022',
    'State:\tS (sleeping)',
    `Tgid:\t${pid}`,
    'Ngid:\t0',
    `Pid:\t${pid}`,
    'PPid:\t1',
    'TracerPid:\t0',
    `Uid:\t${uids.join('\t')}`,
    `Gid:\t${gids.join('\t')}`,
    'FDSize:\t64',
    'Groups:\t1337 ',
    'CapEff:\t0000000000000000',
    '',
  ].join('\n');
}

export class FakeProc {
  readonly root = mkdtempSync(join(tmpdir(), 'mg-guard-proc-'));

  /** A process in a pod's container (cgroup v1, cgroupfs driver) with threads and their IDs (4 each). */
  process(
    pid: number,
    where: { podUid: string; container: string } | 'host',
    threads: { tid: number; uids: number[]; gids: number[] }[],
  ): void {
    const dir = join(this.root, String(pid));
    mkdirSync(join(dir, 'task'), { recursive: true });
    const path =
      where === 'host'
        ? '/system.slice/sshd.service'
        : `/kubepods/besteffort/pod${where.podUid}/${cid(where.podUid, where.container)}`;
    writeFileSync(join(dir, 'cgroup'), `12:pids:${path}\n11:memory:${path}\n0::/\n`);
    for (const t of threads) {
      mkdirSync(join(dir, 'task', String(t.tid)), { recursive: true });
      writeFileSync(join(dir, 'task', String(t.tid), 'status'), status(t.tid, t.uids, t.gids));
    }
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** A pod meshgate admitted (its status annotation), with the kubelet's container statuses. */
export function guardedPod(
  uid: string,
  containers: { name: string; running?: boolean; user?: { uid: number; gid: number }; waiting?: string }[],
  extra: { annotations?: Record<string, string>; proxyRunAsUser?: number } = {},
): GuardPodFields {
  return {
    metadata: {
      name: `pod-${uid.slice(0, 4)}`,
      namespace: 'demo',
      uid,
      annotations: {
        'meshgate.io/status': JSON.stringify({
          version: 1,
          mode: 'cni',
          reason: 'node_verified',
          nativeSidecar: false,
          initContainers: ['istio-validation'],
          containers: [],
          volumes: [],
          affinity: true,
        }),
        ...extra.annotations,
      },
    },
    spec: {
      nodeName: 'node-1',
      containers: containers.map((c) => ({
        name: c.name,
        ...(c.name === 'istio-proxy' && extra.proxyRunAsUser !== undefined
          ? { securityContext: { runAsUser: extra.proxyRunAsUser } }
          : {}),
      })),
    },
    status: {
      containerStatuses: containers.map((c) => ({
        name: c.name,
        ...(c.running === false ? {} : { containerID: `containerd://${cid(uid, c.name)}` }),
        ...(c.user ? { user: { linux: c.user } } : {}),
        ...(c.waiting ? { state: { waiting: { reason: 'CreateContainerError', message: c.waiting } } } : {}),
      })),
    },
  };
}
