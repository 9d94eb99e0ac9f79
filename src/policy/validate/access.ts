/**
 * Interactive access to a guarded pod's containers (issue 33 §1, docs/security.md "Interactive access"):
 * `kubectl exec` and `kubectl attach` reach the apiserver as a CONNECT of pods/exec or pods/attach, which names one
 * container. A process started by exec in the proxy runs as the proxy's UID in the pod's network namespace: the
 * redirect exempts it, and the proxy's files (the socket that hands out the workload's keys) are in reach. So, in
 * the namespaces meshgate guards, only `access.debuggers` may reach a mesh container that way, and each time it is
 * recorded; everyone else is refused. Which containers are the mesh's is decided by name here, and that is exact:
 * in a guarded namespace a container under a reserved name is the real one or the pod was refused (identify.ts).
 * Port-forwarding (pods/portforward) is decided elsewhere: it starts no process in any container (see the docs).
 * Pure: (request facts, compiled config) → verdict.
 */
import type { Compiled } from '../../config/compile.ts';
import type { ReasonCode } from '../../contract/reasons.ts';
import { RESERVED_NAMES } from '../../mesh/index.ts';

export type AccessKind = 'exec' | 'attach';

export interface AccessRequest {
  readonly kind: AccessKind;
  readonly namespace: string;
  readonly pod: string;
  /** PodExecOptions/PodAttachOptions `container`; empty or absent: the apiserver picks the pod's only container. */
  readonly container?: string;
  /** PodExecOptions `command` (exec only), for the record. */
  readonly command?: readonly string[];
  readonly username?: string;
  readonly groups?: readonly string[];
}

export type AccessVerdict =
  | { readonly ok: true; readonly reason: ReasonCode; readonly debugger?: string }
  | { readonly ok: false; readonly reason: ReasonCode; readonly message: string };

/** Every name a mesh's container may carry under any profile, and the configured ones. */
export function meshContainerNames(cfg: Compiled): ReadonlySet<string> {
  return new Set([...RESERVED_NAMES.keys(), ...Object.values(cfg.names)]);
}

/** Which of access.debuggers the requester is ("user alice", "group platform-oncall"); undefined: none. */
export function debuggerOf(r: Pick<AccessRequest, 'username' | 'groups'>, cfg: Compiled): string | undefined {
  const d = cfg.config.access.debuggers;
  if (r.username !== undefined && d.users.includes(r.username)) return `user ${r.username}`;
  const group = r.groups?.find((g) => d.groups.includes(g));
  return group === undefined ? undefined : `group ${group}`;
}

/** How messages name the debuggers: "group system:masters or user alice", or that there are none. */
function debuggersText(cfg: Compiled): string {
  const d = cfg.config.access.debuggers;
  const who = [...d.groups.map((g) => `group ${g}`), ...d.users.map((u) => `user ${u}`)];
  return who.length ? who.join(' or ') : 'nobody (access.debuggers is empty)';
}

/** At most this much of a command goes into a message: the record, not a copy of a script. */
const COMMAND_SHOWN = 200;

export function describeCommand(command: readonly string[] | undefined): string {
  if (!command?.length) return '';
  const text = command.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
  return text.length > COMMAND_SHOWN ? `${text.slice(0, COMMAND_SHOWN - 3)}...` : text;
}

export function judgeAccess(r: AccessRequest, cfg: Compiled): AccessVerdict {
  const container = r.container ?? '';
  const mesh = container === '' || meshContainerNames(cfg).has(container);
  if (!mesh) return { ok: true, reason: 'access_app_container' };
  const debuggerIs = debuggerOf(r, cfg);
  if (debuggerIs) return { ok: true, reason: 'mesh_container_debug', debugger: debuggerIs };
  const who = r.username ?? 'an unknown requester';
  const verb = `kubectl ${r.kind}`;
  if (container === '')
    return {
      ok: false,
      reason: 'access_container_unnamed',
      message:
        `${verb} into pod ${r.namespace}/${r.pod} names no container, so the apiserver would pick the pod's only ` +
        `container, which may be the mesh's proxy (a gateway): name it (${verb} -c <container>); only ` +
        `${debuggersText(cfg)} may reach the mesh's containers (${who} may not)`,
    };
  const role = container === cfg.names.proxy ? "the mesh's proxy" : 'a mesh container';
  return {
    ok: false,
    reason: 'mesh_container_access',
    message:
      `${verb} into container ${container} of pod ${r.namespace}/${r.pod} (${role}) is refused: what it runs ` +
      "would run as the mesh's container — as the proxy, past the redirect and with the workload's keys in reach. " +
      `Only ${debuggersText(cfg)} may (${who} may not), and each time it is recorded; port-forwarding to the ` +
      "proxy's admin port (istioctl proxy-config, linkerd diagnostics) still works",
  };
}
