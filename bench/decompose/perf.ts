/**
 * Linux perf around one load phase: `perf record` of the server's every thread (cpu-clock, with call stacks) while
 * the phase runs, then `perf script` read as a stream, each sample's CPU time (its period, ns) charged to the part
 * classify.ts names. perf resolves JavaScript frames through /tmp/perf-PID.map, which node writes when started with
 * --perf-basic-prof.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { classify, PARTS, type Part } from './classify.ts';

/** Sampling rate: ~2,000 samples per second of CPU, low enough that perf's own cost stays a few percent. */
const FREQUENCY_HZ = 1999;

export type PartNs = Record<Part, number>;

/** Why perf cannot be used here, or undefined when it can (perf installed, and allowed to sample a process). */
export function perfUnavailable(): string | undefined {
  const r = spawnSync('perf', ['record', '-q', '-o', '/dev/null', '--', 'true'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return `perf could not be run (${r.error.message}); on Debian: apt-get install linux-perf`;
  if (r.status !== 0) return `perf record failed (exit ${r.status}): ${r.stderr.trim().split('\n').at(-1)}`;
  return undefined;
}

/** Starts sampling process `pid` into `file`; the returned function stops it and resolves once the file is written. */
export async function record(pid: number, file: string): Promise<() => Promise<void>> {
  const perf = spawn('perf', ['record', '-q', '-F', String(FREQUENCY_HZ), '-g', '-p', String(pid), '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  perf.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => perf.once('exit', resolve));
  // perf attaches within milliseconds; a phase started before it would lose its first samples.
  await new Promise((r) => setTimeout(r, 300));
  if (perf.exitCode !== null) throw new Error(`perf record exited (${perf.exitCode}): ${stderr.trim()}`);
  return async () => {
    perf.kill('SIGINT');
    const code = await exited;
    if (code !== 0 && code !== null) throw new Error(`perf record exited (${code}): ${stderr.trim()}`);
  };
}

/** CPU time by part, ns, of every sample in `file`. */
export async function readParts(file: string): Promise<{ ns: PartNs; samples: number }> {
  const ns = Object.fromEntries(PARTS.map((p) => [p, 0])) as PartNs;
  let samples = 0;
  const script = spawn('perf', ['script', '-i', file, '-F', 'tid,period,ip,sym'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<number | null>((resolve) => script.once('exit', resolve));
  // A sample is a header line (`tid period`), its frames (`\tip symbol`), and a blank line.
  let period = 0;
  let frames: string[] = [];
  const flush = () => {
    if (period > 0) {
      ns[classify(frames)] += period;
      samples++;
    }
    period = 0;
    frames = [];
  };
  for await (const line of createInterface({ input: script.stdout })) {
    if (line === '') flush();
    else if (line.startsWith('\t')) frames.push(line.trim());
    else {
      flush();
      period = Number(line.trim().split(/\s+/)[1]) || 0;
    }
  }
  flush();
  const code = await exited;
  if (code !== 0) throw new Error(`perf script -i ${file} exited (${code})`);
  return { ns, samples };
}
