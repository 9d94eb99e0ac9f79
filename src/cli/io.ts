/** The CLI's window on the world, so subcommands can be tested without touching the real process. */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads a file, or standard input for "-". */
  readInput(path: string): Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
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
    env: process.env,
  };
}

/** Collects output in memory: for tests. */
export function memoryIO(stdin = '', env: Record<string, string> = {}): CliIO & { out: string; err: string } {
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
    env,
  };
  return io;
}
