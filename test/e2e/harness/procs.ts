// Long-running component processes (etcd, apiserver, ...) that must never outlive the test process.
// Three layers make sure of it:
//  1. stop(): SIGTERM to the process group, SIGKILL after a grace period.
//  2. 'exit' / SIGINT / SIGTERM handlers in this process: synchronous SIGKILL of every live group.
//  3. a detached shell watchdog per control plane that polls this process and, if it vanished without cleaning up
//     (SIGKILL, OOM, a crashed vitest worker), kills the groups listed in <dir>/pgids and removes <dir>.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { FatalWaitError } from './wait.ts';

/** 10 s: etcd and the apiserver finish graceful shutdown in 1–3 s here; anything slower is stuck, so kill it. */
export const STOP_GRACE_MS = 10_000;

export interface Component {
  name: string;
  pid: number;
  logPath: string;
  child: ChildProcess;
  /** Exit code or signal once exited, null while running. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  exited: Promise<void>;
}

const live = new Set<Component>();
const dirsToRemove = new Set<string>();
let handlersInstalled = false;

function killGroupSync(c: Component, signal: NodeJS.Signals): void {
  try {
    process.kill(-c.pid, signal); // negative pid: the whole process group (spawned detached = own group)
  } catch {
    // ESRCH: already gone.
  }
}

function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const cleanupSync = () => {
    for (const c of live) killGroupSync(c, 'SIGKILL');
    live.clear();
    for (const d of dirsToRemove) rmSync(d, { recursive: true, force: true });
    dirsToRemove.clear();
  };
  process.on('exit', cleanupSync);
  for (const [sig, num] of [
    ['SIGINT', 2],
    ['SIGTERM', 15],
  ] as const) {
    process.on(sig, () => {
      cleanupSync();
      // Keep the default "die on signal" behaviour unless someone else (e.g. the test runner) handles it too.
      if (process.listenerCount(sig) === 1) process.exit(128 + num);
    });
  }
}

/** Starts `bin args` in its own process group, stdout+stderr appended to `logPath`, and records its pgid. */
export function startComponent(
  name: string,
  bin: string,
  args: string[],
  opts: { logPath: string; pgidFile: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Component {
  installExitHandlers();
  appendFileSync(opts.logPath, `# ${bin} ${args.join(' ')}\n`);
  const fd = openSync(opts.logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(bin, args, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
    });
  } finally {
    closeSync(fd); // the child has its own copy
  }
  if (child.pid === undefined) throw new Error(`could not start ${name} (${bin}): see ${opts.logPath}`);
  const c: Component = { name, pid: child.pid, logPath: opts.logPath, child, exit: null, exited: undefined! };
  c.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      c.exit = { code, signal };
      live.delete(c);
      resolve();
    });
    child.once('error', (err) => {
      appendFileSync(opts.logPath, `# spawn error: ${err.message}\n`);
    });
  });
  live.add(c);
  appendFileSync(opts.pgidFile, `${child.pid}\n`);
  return c;
}

/** For waitFor checks: aborts the wait when the component already exited, with its log tail. */
export function assertRunning(c: Component): void {
  if (c.exit) {
    throw new FatalWaitError(
      `${c.name} exited (code ${c.exit.code}, signal ${c.exit.signal}); log tail:\n${tail(c.logPath, 40)}`,
    );
  }
}

/** SIGTERM the group, SIGKILL it after STOP_GRACE_MS, and wait until the leader is reaped. */
export async function stopComponent(c: Component): Promise<void> {
  if (c.exit) return;
  killGroupSync(c, 'SIGTERM');
  const timedOut = await Promise.race([c.exited.then(() => false), sleep(STOP_GRACE_MS).then(() => true)]);
  if (timedOut) {
    killGroupSync(c, 'SIGKILL');
    await c.exited;
  }
  killGroupSync(c, 'SIGKILL'); // any grandchild left in the group after the leader exited
}

/** The last `lines` lines of a log file ('' if missing). */
export function tail(path: string, lines: number): string {
  if (!existsSync(path)) return '';
  return readFileSync(path, 'utf8')
    .split('\n')
    .slice(-lines - 1)
    .join('\n');
}

/** Removes `dir` at process exit unless removed earlier (see forgetDir). */
export function removeDirOnExit(dir: string): void {
  installExitHandlers();
  dirsToRemove.add(dir);
}

export function forgetDir(dir: string): void {
  dirsToRemove.delete(dir);
}

/**
 * Starts the watchdog (layer 3). It checks once a second (cheap, and a leak lasts at most that long) whether
 * this process still exists; if not, it TERMs then KILLs every group in `pgidFile` and removes `dir`.
 * Returns a function that stops the watchdog (for a normal stop()).
 */
export function startWatchdog(dir: string, pgidFile: string): () => Promise<void> {
  const script = `
    parent=$1; dir=$2; pgids=$3
    while kill -0 "$parent" 2>/dev/null; do sleep 1; done
    if [ -f "$pgids" ]; then
      for p in $(cat "$pgids"); do kill -TERM "-$p" 2>/dev/null; done
      sleep 3
      for p in $(cat "$pgids"); do kill -KILL "-$p" 2>/dev/null; done
    fi
    rm -rf "$dir"`;
  const child = spawn('sh', ['-c', script, 'meshgate-watchdog', String(process.pid), dir, pgidFile], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  const exited = once(child, 'exit');
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      return;
    }
    await exited;
  };
}

/** Whether a process (or, for a negative id, a process group) of this id still exists; EPERM: it does, not ours. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
