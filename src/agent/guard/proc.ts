/**
 * What the kernel says about a process, read from procfs text (pure parsers; guard/scan.ts reads the files):
 * which container it belongs to (`/proc/<pid>/cgroup`) and whom it runs as (`/proc/<pid>/task/<tid>/status`).
 *
 * Credentials are per thread: a raw `setuid` syscall in one thread changes that thread only, and a socket it then
 * opens carries that thread's credentials — the ones iptables' owner match reads (xt_owner: the socket file's
 * fsuid/fsgid). So every thread is judged, by all four of its IDs: real, effective, saved (it can switch back to
 * those at will) and filesystem (what the owner match sees).
 */

/** The four IDs of one kind as /proc lists them: real, effective, saved set, filesystem. */
export type IdSet = readonly [number, number, number, number];

export interface ThreadIds {
  uids: IdSet;
  gids: IdSet;
}

function idLine(text: string, key: 'Uid' | 'Gid'): IdSet | undefined {
  const m = new RegExp(`^${key}:\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s*$`, 'm').exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])] : undefined;
}

/** The `Uid:` and `Gid:` lines of a status file; undefined when either is missing (the task exited mid-read). */
export function parseStatusIds(text: string): ThreadIds | undefined {
  const uids = idLine(text, 'Uid');
  const gids = idLine(text, 'Gid');
  return uids && gids ? { uids, gids } : undefined;
}

/** A pod's UID as the kubelet writes it into cgroup names: dashes (cgroupfs) or underscores (systemd slices). */
const POD_SEGMENT =
  /(?:^|[-/])pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})(?:\.slice)?$/;
/** The container's cgroup: `<id>` (cgroupfs), `cri-containerd-<id>.scope`, `crio-<id>.scope`, `docker-<id>.scope`. */
const CONTAINER_SEGMENT = /^(?:cri-containerd-|crio-|docker-|containerd-)?([0-9a-f]{64})(?:\.scope)?$/;

export interface CgroupOwner {
  /** The pod's metadata.uid, with dashes. */
  podUid: string;
  /** The runtime's container ID, as the kubelet reports it after `containerd://` or `cri-o://`. */
  containerId: string;
}

/**
 * The pod and container a process belongs to, from its `/proc/<pid>/cgroup`: the segment `pod<uid>` followed
 * directly by the container's own segment, in any hierarchy (cgroup v1 lists one line per hierarchy, v2 one line
 * `0::/path`). Paths may start with `/..` segments when read from another cgroup namespace: only the pod and
 * container segments are matched. Undefined for processes outside any pod container (the node's own, a pod's
 * conmon).
 */
export function parseCgroup(text: string): CgroupOwner | undefined {
  for (const line of text.split('\n')) {
    const path = line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1);
    const segments = path.split('/');
    for (let i = segments.length - 2; i >= 0; i--) {
      const pod = POD_SEGMENT.exec(segments[i]);
      if (!pod) continue;
      const container = CONTAINER_SEGMENT.exec(segments[i + 1]);
      if (container) return { podUid: pod[1].replaceAll('_', '-'), containerId: container[1] };
      break;
    }
  }
  return undefined;
}
