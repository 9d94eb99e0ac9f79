/**
 * The node agent's proxy-identity guard (docs/security.md "Who can become the proxy"): under `apps.privileges:
 * node` admission leaves a container's identity to the node, so the node makes sure no container of a guarded pod
 * but the mesh's ever runs as the identity the redirect exempts. Every `intervalMs` it reads the threads of the
 * guarded pods' containers (guard/scan.ts) and, for each container that runs as the proxy's UID or GID (its image's
 * USER, setuid with default capabilities, a file capability, a set-user-ID binary), or that the runtime reports
 * started as it (KEP-3619):
 *   1. SIGKILLs its processes at once (every pass while any remain: the kubelet may restart it meanwhile);
 *   2. deletes its pod (grace 0, UID precondition) — the guard's narrow right, policed by the chart's admission
 *      policy to guarded pods on this node;
 *   3. records a Warning Event on the pod and counts it (meshgate_node_agent_proxy_identity_total).
 * The window — from the switch to the kill — is one interval plus a pass (measured: docs/security.md); on runtimes
 * with the NRI plugin (nri/) the identity is refused before the container runs and setuid to it is denied, and the
 * guard only reports what the runtime refused.
 *
 * Nothing guarded on the node: no pass reads /proc.
 */
import type { EventReason, ReasonCode } from '../../contract/reasons.ts';
import { errorFields } from '../../log/fields.ts';
import type { AgentLog } from '../agent.ts';
import { type GuardFinding, judgeRunning, judgeStatus } from './judge.ts';
import type { GuardedPod } from './pods.ts';
import type { CgroupOwner } from './proc.ts';
import type { ScanResult } from './scan.ts';

/** The reason code (src/contract/reasons.ts) the guard's Events and log lines carry. */
export const STOPPED_CODE = 'proxy_identity_stopped' satisfies ReasonCode;

/** The guarded pods on this node, kept current by a watch (guard/kube.ts). */
export interface GuardedPods {
  current(): ReadonlyMap<string, GuardedPod>;
}

/** What the guard does in the cluster; guard/kube.ts implements it on the API, tests with fakes. */
export interface GuardActions {
  deletePod(pod: GuardedPod): Promise<void>;
  event(
    pod: GuardedPod,
    reason: Extract<EventReason, 'MeshProxyIdentityStopped' | 'MeshProxyIdentityRefused'>,
    message: string,
  ): Promise<void>;
}

export type GuardAction = 'killed' | 'deleted' | 'refused_by_runtime';

/** Feeds the metrics (guard/metrics.ts); must be cheap and must not throw. */
export interface GuardObserver {
  passed(ms: number, scan: ScanResult | undefined): void;
  acted(action: GuardAction, finding: GuardFinding): void;
  failed(step: 'delete' | 'event' | 'kill'): void;
}

export interface GuardDeps {
  pods: GuardedPods;
  actions: GuardActions;
  log: AgentLog;
  scan: (watched: (owner: CgroupOwner) => boolean) => ScanResult;
  kill?: (pid: number) => void;
  observer?: GuardObserver;
  now?: () => number;
}

const NO_OBSERVER: GuardObserver = { passed() {}, acted() {}, failed() {} };

/** SIGKILL; a process already gone (ESRCH) is what we wanted. */
function killProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export class ProxyGuard {
  readonly #intervalMs: number;
  readonly #deps: Required<GuardDeps>;
  /** Pods (by UID) whose deletion succeeded, and findings (pod UID/container) already reported. */
  readonly #deleted = new Set<string>();
  readonly #reported = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(intervalMs: number, deps: GuardDeps) {
    this.#intervalMs = intervalMs;
    this.#deps = { kill: killProcess, observer: NO_OBSERVER, now: () => performance.now(), ...deps };
  }

  start(): void {
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.pass().finally(() => {
        this.#running = undefined;
        this.#schedule(this.#intervalMs);
      });
    }, ms);
  }

  /** One pass: read, judge, act. Public for tests; the timer calls it. */
  async pass(): Promise<GuardFinding[]> {
    const t0 = this.#deps.now();
    const pods = this.#deps.pods.current();
    const scan = pods.size === 0 ? undefined : this.#deps.scan((o) => pods.has(o.podUid));
    const findings = [...(scan ? judgeRunning(pods, scan) : []), ...[...pods.values()].flatMap(judgeStatus)];
    // Kill first, all of them, before any API call: those are what the window is made of.
    for (const f of findings) if (f.kind === 'running') this.#kill(f);
    this.#deps.observer.passed(this.#deps.now() - t0, scan);
    for (const f of findings) await this.#report(f);
    for (const uid of this.#deleted) if (!pods.has(uid)) this.#deleted.delete(uid);
    for (const key of this.#reported) if (!pods.has(key.slice(0, key.indexOf('/')))) this.#reported.delete(key);
    return findings;
  }

  #kill(f: GuardFinding): void {
    try {
      for (const pid of f.pids) this.#deps.kill(pid);
      // Counted once per pod: later passes only kill what the kubelet restarted before the pod was gone.
      if (!this.#deleted.has(f.pod.uid)) this.#deps.observer.acted('killed', f);
    } catch (err) {
      this.#deps.observer.failed('kill');
      this.#deps.log.error({ err: errorFields(err), pod: f.pod.uid, container: f.container }, 'could not stop');
    }
  }

  async #report(f: GuardFinding): Promise<void> {
    const key = `${f.pod.uid}/${f.container}/${f.kind}`;
    if (f.kind === 'refused') {
      if (this.#reported.has(key)) return;
      this.#reported.add(key);
      this.#deps.observer.acted('refused_by_runtime', f);
      this.#deps.log.warn({ pod: `${f.pod.namespace}/${f.pod.name}`, container: f.container }, f.message);
      await this.#event(f, 'MeshProxyIdentityRefused', f.message);
      return;
    }
    if (this.#deleted.has(f.pod.uid)) return;
    const message =
      `${f.message}: ` +
      (f.kind === 'running' ? 'its processes were killed and its pod removed' : 'its pod was removed') +
      ` [${STOPPED_CODE}]`;
    this.#deps.log.warn({ pod: `${f.pod.namespace}/${f.pod.name}`, container: f.container, kind: f.kind }, message);
    try {
      await this.#deps.actions.deletePod(f.pod);
      this.#deleted.add(f.pod.uid);
      this.#deps.observer.acted('deleted', f);
    } catch (err) {
      this.#deps.observer.failed('delete');
      this.#deps.log.error({ err: errorFields(err), pod: f.pod.uid }, 'could not remove the pod; retrying next pass');
      return;
    }
    await this.#event(f, 'MeshProxyIdentityStopped', message);
  }

  async #event(f: GuardFinding, reason: Parameters<GuardActions['event']>[1], message: string): Promise<void> {
    try {
      await this.#deps.actions.event(f.pod, reason, message);
    } catch (err) {
      this.#deps.observer.failed('event');
      this.#deps.log.warn({ err: errorFields(err), pod: f.pod.uid }, 'could not record the Event');
    }
  }
}
