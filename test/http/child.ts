/**
 * Starts test/http/server-child.ts (the real server in its own process) and talks to it over IPC. Every wait is
 * bounded, and the child is killed by its pid when the test is done with it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TransportLimits } from '../../src/server/limits.ts';
import type { ChildStats } from './server-child.ts';

export interface ServerChild {
  port: number;
  ca: string;
  pid: number;
  process: ChildProcess;
  stats(): Promise<ChildStats>;
  /** Exit code or signal once it has exited, else null. */
  exited(): string | null;
  stop(): Promise<void>;
}

function next<T>(child: ChildProcess, type: string, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`server child sent no "${type}" within ${ms} ms`)), ms);
    const onMessage = (m: { type: string }) => m.type === type && done(null, m as T);
    const onExit = (code: number | null, signal: string | null) =>
      done(new Error(`server child exited (${code ?? signal}) before "${type}"`));
    const done = (err: Error | null, value?: T) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(value!);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/**
 * `cgroupProcs`: a cgroup's cgroup.procs file the server joins before node starts (through sh, which writes
 * its own pid there and then execs node), so every page it uses is charged to that cgroup. `execArgv`: node
 * flags (no spaces inside one).
 */
export async function startServerChild(
  limits: Partial<TransportLimits> = {},
  o: { cgroupProcs?: string; execArgv?: string[] } = {},
): Promise<ServerChild> {
  const execArgv = o.execArgv ?? [];
  const inCgroup = o.cgroupProcs
    ? {
        execPath: '/bin/sh',
        execArgv: ['-c', `echo $$ > '${o.cgroupProcs}' && exec '${process.execPath}' ${execArgv.join(' ')} "$0" "$@"`],
      }
    : { execArgv };
  const child = fork(fileURLToPath(new URL('./server-child.ts', import.meta.url)), [JSON.stringify(limits)], {
    ...inCgroup,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await next<{ port: number; ca: string }>(child, 'ready', 60_000).catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
  let exit: string | null = null;
  child.once('exit', (code, signal) => (exit = String(code ?? signal)));
  // A send to a server that just died (killed by the kernel, say) errors on the channel: stats() reports it.
  child.on('error', () => {});
  return {
    port: ready.port,
    ca: ready.ca,
    pid: child.pid!,
    process: child,
    async stats() {
      if (exit !== null || !child.connected) throw new Error(`server child exited (${exit ?? 'disconnected'})`);
      const reply = next<{ stats: ChildStats }>(child, 'stats', 10_000);
      child.send('stats');
      return (await reply).stats;
    },
    exited: () => exit,
    async stop() {
      if (exit !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await gone;
    },
  };
}
