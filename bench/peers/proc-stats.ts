/**
 * CPU time and memory of any process by pid, from /proc: the same reading for a Node peer and a Go peer, so
 * "CPU per review" and "RSS" mean the same thing for every peer of the comparison.
 *   /proc/PID/stat    utime + stime (fields 14, 15): every thread of the process, in clock ticks
 *   /proc/PID/status  VmRSS (resident now) and VmHWM (the most it was resident), in kB
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second (USER_HZ), 100 on Linux unless the kernel says otherwise. */
const TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export interface ProcSample {
  /** User + system CPU seconds since the process started. */
  cpuS: number;
  rssMiB: number;
  peakRssMiB: number;
}

export function sampleProc(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime: fields 14 and 15 of the line
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { cpuS: ticks / TICKS_PER_S, rssMiB: kb('VmRSS') / 1024, peakRssMiB: kb('VmHWM') / 1024 };
}

/** Pins every thread of a running process to `cpu` (threads it starts later inherit it). */
export function pinProcess(pid: number, cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}
