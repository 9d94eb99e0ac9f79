/** The CLI's window on the world, so subcommands can be tested without touching the real process. */
import { open } from 'node:fs/promises';
import { fstatSync } from 'node:fs';

/** An input opened for streaming: its bytes as they come, and its size when it is a regular file. */
export interface InputStream {
  chunks: AsyncIterable<Uint8Array>;
  size?: number;
}

export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads a file, or standard input for "-". */
  readInput(path: string): Promise<string>;
  /** Opens a file, or standard input for "-", to read it piece by piece (a missing file fails here). */
  openInput(path: string): Promise<InputStream>;
  /** stderr is a terminal (progress is drawn there). */
  stderrIsTTY: boolean;
  env: Readonly<Record<string, string | undefined>>;
}

async function openFile(path: string): Promise<InputStream> {
  const handle = await open(path, 'r');
  const st = await handle.stat();
  return { chunks: handle.createReadStream(), size: st.isFile() ? st.size : undefined };
}

export function processIO(): CliIO {
  return {
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    readInput: async (path) => {
      const { readFile } = await import('node:fs/promises');
      if (path === '-') {
        const chunks: Buffer[] = [];
        for await (const c of process.stdin) chunks.push(c as Buffer);
        return Buffer.concat(chunks).toString('utf8');
      }
      return readFile(path, 'utf8');
    },
    openInput: async (path) => {
      if (path !== '-') return openFile(path);
      const st = fstatSync(0);
      return { chunks: process.stdin, size: st.isFile() ? st.size : undefined };
    },
    stderrIsTTY: process.stderr.isTTY === true,
    env: process.env,
  };
}

/** Standard input given as text, handed out in chunks of `chunkBytes` as a pipe would. */
async function* chunked(text: string, chunkBytes: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += chunkBytes) yield bytes.subarray(i, i + chunkBytes);
}

/** Collects output in memory: for tests. Standard input comes in 64 KiB chunks, as from a pipe. */
export function memoryIO(
  stdin = '',
  env: Record<string, string> = {},
  opts: { chunkBytes?: number; stderrIsTTY?: boolean } = {},
): CliIO & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (t: string) => {
      io.out += t;
    },
    stderr: (t: string) => {
      io.err += t;
    },
    readInput: async (path: string) => {
      if (path === '-') return stdin;
      const { readFile } = await import('node:fs/promises');
      return readFile(path, 'utf8');
    },
    openInput: async (path: string): Promise<InputStream> =>
      path === '-' ? { chunks: chunked(stdin, opts.chunkBytes ?? 64 * 1024) } : openFile(path),
    stderrIsTTY: opts.stderrIsTTY ?? false,
    env,
  };
  return io;
}
