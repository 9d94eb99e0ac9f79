/**
 * The guard's decision, pure: which containers of guarded pods are, or became, the proxy's identity — by what
 * their threads run as (guard/scan.ts), or by what the runtime reports they started as (KEP-3619
 * `status.containerStatuses[].user.linux`) — and which the runtime refused to create for it (the NRI plugin,
 * nri/). A mesh container (GuardedPod.exempt) is never a finding; a container the kubelet has not reported yet
 * (its ID not in the pod's status) is judged on a later pass, once its name is known.
 */
import type { ReasonCode } from '../../contract/reasons.ts';
import type { GuardedPod } from './pods.ts';
import type { ScanResult } from './scan.ts';
import type { IdSet } from './proc.ts';

/** The code the NRI plugin puts in its refusal, which the kubelet copies into the container's waiting message. */
export const REFUSED_CODE = 'proxy_identity_refused' satisfies ReasonCode;

export interface GuardFinding {
  pod: GuardedPod;
  container: string;
  /** running: a thread runs as the identity; reported: the runtime says it started as it; refused: never ran. */
  kind: 'running' | 'reported' | 'refused';
  /** One sentence, without the reason code. */
  message: string;
  /** The container's processes to stop (running only). */
  pids: number[];
}

const ROLES = ['real', 'effective', 'saved', 'filesystem'] as const;

/** "UID 1337 (effective, saved, filesystem)" for the positions of `ids` holding one of `wanted`. */
function held(kind: 'UID' | 'GID', ids: IdSet, wanted: ReadonlySet<number>): string | undefined {
  const at = ROLES.filter((_, i) => wanted.has(ids[i]));
  if (at.length === 0) return undefined;
  const id = ids[ROLES.indexOf(at[0])];
  return `${kind} ${id} (${at.join(', ')})`;
}

const where = (p: GuardedPod, container: string) => `container ${container} of pod ${p.namespace}/${p.name}`;
const EXEMPT = "the proxy's identity, whose traffic the pod's redirect exempts";

/** Containers of guarded pods with a thread running as the proxy's UID or GID. */
export function judgeRunning(pods: ReadonlyMap<string, GuardedPod>, scan: ScanResult): GuardFinding[] {
  const byId = new Map<string, { pod: GuardedPod; name: string }>();
  for (const pod of pods.values()) for (const [id, name] of pod.containers) byId.set(id, { pod, name });
  const findings: GuardFinding[] = [];
  for (const [id, procs] of scan.containers) {
    const owner = byId.get(id);
    if (!owner || owner.pod.exempt.has(owner.name)) continue;
    const { pod, name } = owner;
    let first: string | undefined;
    for (const p of procs)
      for (const t of p.threads) {
        const what = held('UID', t.ids.uids, pod.uids) ?? held('GID', t.ids.gids, pod.gids);
        if (what && !first) first = `${what} in pid ${p.pid}${t.tid === p.pid ? '' : ` thread ${t.tid}`}`;
      }
    if (first)
      findings.push({
        pod,
        container: name,
        kind: 'running',
        message: `${where(pod, name)} ran as ${first}, ${EXEMPT}`,
        pids: procs.map((p) => p.pid),
      });
  }
  return findings;
}

/** What the kubelet's status says: containers the runtime started as the identity, or refused to create for it. */
export function judgeStatus(pod: GuardedPod): GuardFinding[] {
  const findings: GuardFinding[] = [];
  for (const [name, user] of pod.users) {
    if (pod.exempt.has(name)) continue;
    const what =
      user.uid !== undefined && pod.uids.has(user.uid)
        ? `UID ${user.uid}`
        : user.gid !== undefined && pod.gids.has(user.gid)
          ? `GID ${user.gid}`
          : undefined;
    if (what)
      findings.push({
        pod,
        container: name,
        kind: 'reported',
        message: `the runtime reports ${where(pod, name)} started as ${what}, ${EXEMPT}`,
        pids: [],
      });
  }
  for (const [name, w] of pod.waiting) {
    if (pod.exempt.has(name) || !w.message.includes(`[${REFUSED_CODE}]`)) continue;
    findings.push({
      pod,
      container: name,
      kind: 'refused',
      message: `the runtime refused to create ${where(pod, name)}: ${w.message}`,
      pids: [],
    });
  }
  return findings;
}
