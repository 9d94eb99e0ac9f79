/**
 * What a forked bench server answers to the parent's `cpu` message (bench/server.ts, bench/peers/floor-server.ts):
 * its CPU and memory so far, and monoUs, CLOCK_MONOTONIC in µs, the clock of --cpu-prof's sample timestamps (to cut
 * a phase out of it).
 */
import type { ServerMessage } from './server.ts';

export function cpuMessage(): Extract<ServerMessage, { type: 'cpu' }> {
  const cpu = process.cpuUsage();
  const mem = process.memoryUsage();
  return {
    type: 'cpu',
    userUs: cpu.user,
    systemUs: cpu.system,
    rssBytes: mem.rss,
    heapUsedBytes: mem.heapUsed,
    monoUs: Number(process.hrtime.bigint() / 1000n),
  };
}
