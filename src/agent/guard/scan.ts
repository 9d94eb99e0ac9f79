/**
 * One pass over the node's processes (procfs, the host's: the agent runs with hostPID): which processes belong to
 * the containers the guard watches, and whom each of their threads runs as.
 *
 * Cost, measured (docs/security.md "Who can become the proxy"): one readdir of /proc and one read of every
 * process's `cgroup` (~10–30 µs each), then one `status` read per thread of a watched container (~30–100 µs: the
 * kernel renders the whole file). Membership is read afresh every pass, never cached: a cached pid could have
 * been reused by a process of another container since the last pass.
 *
 * Reads are synchronous (a few ms for hundreds of processes; the agent's loop has nothing else to do meanwhile) and
 * bounded by the node's own limits (pid_max, threads-max). No thread of a watched container is skipped: a cap
 * would let a container hide the thread that switched identity behind enough others.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { type CgroupOwner, parseCgroup, parseStatusIds, type ThreadIds } from './proc.ts';

/** `Uid:`/`Gid:` are lines 9–10 of status; its first 2 KiB always hold them (Name is at most 64 bytes). */
const READ_BYTES = 2048;

export interface WatchedProcess {
  pid: number;
  /** Each thread (the pid's own included) and its IDs; a thread gone mid-read is left out. */
  threads: { tid: number; ids: ThreadIds }[];
}

export interface ScanResult {
  /** Processes of watched containers, by container ID. */
  containers: Map<string, WatchedProcess[]>;
  /** Processes looked at (every pid under /proc). */
  processes: number;
  threadsRead: number;
}

const buffer = Buffer.alloc(READ_BYTES);

/** The first READ_BYTES of a procfs file; undefined when it is gone (the process exited). */
export function readHead(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const n = readSync(fd, buffer, 0, READ_BYTES, 0);
    return buffer.toString('latin1', 0, n);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const isPid = (name: string) => /^\d+$/.test(name);

/**
 * Reads every process's cgroup under `procRoot` and, for those whose container `watched` accepts, every thread's
 * IDs.
 */
export function scanProcesses(procRoot: string, watched: (owner: CgroupOwner) => boolean): ScanResult {
  const containers = new Map<string, WatchedProcess[]>();
  let processes = 0;
  let threadsRead = 0;
  for (const name of list(procRoot)) {
    if (!isPid(name)) continue;
    processes++;
    const cgroup = readHead(`${procRoot}/${name}/cgroup`);
    const owner = cgroup === undefined ? undefined : parseCgroup(cgroup);
    if (!owner || !watched(owner)) continue;
    const procs = containers.get(owner.containerId) ?? [];
    containers.set(owner.containerId, procs);
    const threads: WatchedProcess['threads'] = [];
    for (const tid of list(`${procRoot}/${name}/task`)) {
      if (!isPid(tid)) continue;
      const status = readHead(`${procRoot}/${name}/task/${tid}/status`);
      const ids = status === undefined ? undefined : parseStatusIds(status);
      threadsRead++;
      if (ids) threads.push({ tid: Number(tid), ids });
    }
    procs.push({ pid: Number(name), threads });
  }
  return { containers, processes, threadsRead };
}
