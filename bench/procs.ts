/**
 * Child processes of the HTTP benchmark: the server (bench/server.ts) and the load generator (bench/load.ts),
 * each in its own process so neither's CPU is charged to the other. Every wait is bounded: a child that does
 * not answer in time is killed (by its pid) and the benchmark fails loudly instead of hanging.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServerMessage, ServerSettings } from './server.ts';
import type { LoadJob, LoadResult } from './load.ts';

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

/** Waits for the next IPC message of `type`, rejecting after `ms` or if the child exits first. */
function nextMessage<T extends { type: string }>(child: ChildProcess, type: string, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { type: string; message?: string }) => {
      if (m.type === type) done(() => resolve(m as T));
      else if (m.type === 'error') done(() => reject(new Error(m.message)));
    };
    const onExit = (code: number | null) =>
      done(() => reject(new Error(`child ${child.pid} exited (${code}) before sending "${type}"`)));
    const timer = setTimeout(
      () => done(() => reject(new Error(`child ${child.pid} sent no "${type}" within ${ms} ms`))),
      ms,
    );
    const done = (f: () => void) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      f();
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

function exited(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export interface CpuSample {
  cpuUs: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** The server's monotonic clock, µs. */
  monoUs: number;
}

export interface ServerChild {
  url: string;
  ca: string;
  pid: number;
  cpu(): Promise<CpuSample>;
  /** Bytes the server has written to stdout (its log) so far. */
  logBytes(): number;
  setLogLevel(level: ServerSettings['logLevel']): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Where a child runs: `cpu` pins it (and every thread it starts) to that CPU from its first instruction, with
 * taskset as its launcher, so peers compared side by side get the same core; `script` runs another tree's
 * bench/server.ts (bench/trees.ts) for before/after figures.
 */
export interface ChildPlacement {
  cpu?: number;
  script?: string;
}

/**
 * Where the comparisons that pin their processes put them (--peers, --before, --decompose): every server under test
 * on one CPU, the load generator on the other, so peers and trees compared side by side get the same core.
 */
export const SERVER_CPU = 1;
export const LOAD_CPU = 0;

/** fork() options that start node under `taskset -c CPU` when a CPU is given. */
export function pinnedFork(execArgv: string[], cpu: number | undefined): { execPath?: string; execArgv: string[] } {
  return cpu === undefined
    ? { execArgv }
    : { execPath: 'taskset', execArgv: ['-c', String(cpu), process.execPath, ...execArgv] };
}

export async function startServerChild(
  settings: ServerSettings,
  execArgv: string[] = [],
  place: ChildPlacement = {},
): Promise<ServerChild> {
  const child = fork(place.script ?? here('./server.ts'), [JSON.stringify(settings)], {
    ...pinnedFork(execArgv, place.cpu),
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  let logBytes = 0;
  child.stdout!.on('data', (chunk: Buffer) => (logBytes += chunk.length));
  const ready = await nextMessage<Extract<ServerMessage, { type: 'ready' }>>(child, 'ready', 30_000).catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    url: ready.url,
    ca: ready.ca,
    pid: child.pid!,
    async cpu() {
      const reply = nextMessage<Extract<ServerMessage, { type: 'cpu' }>>(child, 'cpu', 10_000);
      child.send({ type: 'cpu' });
      const m = await reply;
      return { cpuUs: m.userUs + m.systemUs, rssBytes: m.rssBytes, heapUsedBytes: m.heapUsedBytes, monoUs: m.monoUs };
    },
    logBytes: () => logBytes,
    async setLogLevel(level) {
      const reply = nextMessage(child, 'level', 10_000);
      child.send({ type: 'level', level });
      await reply;
    },
    async stop() {
      if (child.connected) child.send({ type: 'exit' });
      await exited(child, 15_000);
    },
  };
}

export interface LoadChild {
  run(job: Omit<LoadJob, 'type'>): Promise<LoadResult>;
  stop(): Promise<void>;
}

export async function startLoadChild(cpu?: number): Promise<LoadChild> {
  const child = fork(here('./load.ts'), [], { ...pinnedFork([], cpu), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await nextMessage(child, 'ready', 30_000);
  return {
    async run(job) {
      const result = nextMessage<LoadResult>(child, 'result', (job.durationS + 30) * 1000);
      child.send({ type: 'run', ...job });
      return result;
    },
    async stop() {
      child.disconnect();
      await exited(child, 5_000);
    },
  };
}

/** Runs `file` in a child that sends one result over IPC and exits (e.g. a part that needs --expose-gc). */
export async function forkForResult<T>(file: string, execArgv: string[], timeoutMs: number): Promise<T> {
  const child = fork(here(file), [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const result = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} sent no result within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('message', (m: T) => {
      clearTimeout(timer);
      resolve(m);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited (${code}) without a result`));
    });
  });
  child.disconnect();
  await exited(child, 5_000);
  return result;
}
