/**
 * Which process holds a socket, from /proc (issue 33 §8): /proc/net/unix and /proc/net/tcp{,6} list the host network
 * namespace's sockets by inode, and /proc/<pid>/fd links each descriptor to `socket:[<inode>]`. Reading another
 * process's fd directory needs ptrace read access to it (its UID, or CAP_SYS_PTRACE) and its PID (the pod's hostPID):
 * the chart gives the node agent both when it checks Istio ambient. Pure parsers plus small, bounded readers; the
 * proc root is a parameter so tests can give a tree of their own.
 */
import { readdir, readFile, readlink, stat } from 'node:fs/promises';

/** /proc/net/unix: `Num RefCount Protocol Flags Type St Inode Path`. */
export interface UnixSocket {
  readonly flags: string;
  readonly state: string;
  readonly inode: string;
  readonly path: string;
}

/** __SO_ACCEPTCON in the Flags column: a listening socket (net/unix/af_unix.c unix_seq_show). */
const ACCEPTCON = 0x10000;
/** SS_UNCONNECTED and SS_CONNECTED in the St column. */
export const UNIX_LISTENING = '01';
export const UNIX_CONNECTED = '03';

export function parseProcNetUnix(text: string): UnixSocket[] {
  const out: UnixSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    out.push({ flags: f[3], state: f[5], inode: f[6], path: f.slice(7).join(' ') });
  }
  return out;
}

export const isListening = (s: UnixSocket) =>
  s.state === UNIX_LISTENING && (Number.parseInt(s.flags, 16) & ACCEPTCON) !== 0;

/** The inodes of TCP sockets listening (st 0A) on `port`, from /proc/net/tcp or tcp6 (hex local address:port). */
export function tcpListeners(text: string, port: number): string[] {
  const out: string[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== '0A') continue;
    const local = f[1].split(':');
    if (Number.parseInt(local[local.length - 1], 16) === port) out.push(f[9]);
  }
  return out;
}

/** The socket inodes a process holds; undefined when its fds cannot be read (gone, or no ptrace access). */
export async function socketsOf(procRoot: string, pid: string): Promise<Set<string> | { error: string }> {
  const dir = `${procRoot}/${pid}/fd`;
  let fds: string[];
  try {
    fds = await readdir(dir);
  } catch (err) {
    return { error: `${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  const inodes = new Set<string>();
  for (const fd of fds) {
    const target = await readlink(`${dir}/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]);
  }
  return inodes;
}

/** Processes scanned for an owner at most (a node runs a few thousand); beyond it the search gives up, logged. */
export const MAX_PROCESSES = 65_536;

/**
 * The processes holding `inodes`, each with every socket it holds: `hint` first (the owner found last time, usually
 * still it, so one fd directory is read), then every process in `procRoot` until each inode has its holder. Also says
 * how many processes could not be read (no ptrace access), which is why a holder may be missing.
 */
export async function findOwners(
  procRoot: string,
  inodes: ReadonlySet<string>,
  hint?: string,
): Promise<{ owners: Map<string, Set<string>>; unreadable: number; firstError?: string }> {
  const owners = new Map<string, Set<string>>();
  const unowned = new Set(inodes);
  let unreadable = 0;
  let firstError: string | undefined;
  const check = async (pid: string) => {
    const s = await socketsOf(procRoot, pid);
    if ('error' in s) {
      unreadable++;
      firstError ??= s.error;
      return;
    }
    let holds = false;
    for (const i of inodes)
      if (s.has(i)) {
        holds = true;
        unowned.delete(i);
      }
    if (holds) owners.set(pid, s);
  };
  if (hint) {
    await check(hint);
    if (owners.size) return { owners, unreadable: 0 };
  }
  const pids = (await readdir(procRoot).catch(() => [] as string[])).filter((p) => /^\d+$/.test(p));
  for (const pid of pids.slice(0, MAX_PROCESSES)) {
    if (unowned.size === 0) break;
    if (pid !== hint) await check(pid);
  }
  return { owners, unreadable, firstError };
}

/** Whether `a` and `b` are one file (device and inode). */
export async function sameFile(a: string, b: string): Promise<boolean | { error: string }> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino;
  } catch (err) {
    return { error: (err as Error).message };
  }
}

export const readText = (path: string) => readFile(path, 'utf8');
