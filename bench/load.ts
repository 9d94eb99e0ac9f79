/**
 * The load generator, a child process of bench/run.ts separate from the server: autocannon's programmatic API
 * over HTTPS, HTTP/1.1 keep-alive, no pipelining, fixed connections and duration. Bodies are pre-serialised
 * and rotated (autocannon cycles each connection through the `requests` list). Latencies are recorded from
 * autocannon's per-response event at full (sub-millisecond) resolution, because its own histogram keeps whole
 * milliseconds, too coarse for a sub-millisecond echo.
 *
 * TLS: autocannon 8 hard-codes `rejectUnauthorized: false` in its client (lib/httpClient.js), so the CA passed
 * here is not enforced; bench/preflight.ts proves the same certificate verifies against the CA before any load.
 */
import autocannon from 'autocannon';
import { percentile } from './stats.ts';

export interface LoadJob {
  type: 'run';
  url: string;
  path: string;
  bodies: string[];
  ca: string;
  connections: number;
  durationS: number;
}

export interface LoadResult {
  type: 'result';
  path: string;
  durationS: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The load generator's own CPU per 1,000 answered reviews (CPU-s): shows who saturates the cores. */
  loaderCpuSPer1k: number;
}

/** Samples kept per phase; past this, every later response is still counted but not timed (bounded memory). */
const MAX_SAMPLES = 2_000_000;

async function runJob(job: LoadJob): Promise<LoadResult> {
  const latencies = new Float64Array(MAX_SAMPLES);
  let n = 0;
  let ok = 0;
  const cpu0 = process.cpuUsage();
  const instance = autocannon({
    url: job.url,
    connections: job.connections,
    pipelining: 1,
    duration: job.durationS,
    timeout: 10, // seconds: the apiserver's default webhook timeout
    servername: 'localhost',
    tlsOptions: { ca: job.ca },
    requests: job.bodies.map((body) => ({
      method: 'POST',
      path: job.path,
      headers: { 'content-type': 'application/json' },
      body,
    })),
  });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status < 200 || status >= 300) return;
    ok++;
    if (n < MAX_SAMPLES) latencies[n++] = ms;
  });
  const res = await instance;
  const cpu = process.cpuUsage(cpu0);
  const sorted = latencies.subarray(0, n).sort();
  return {
    type: 'result',
    path: job.path,
    durationS: res.duration,
    ok,
    non2xx: res.non2xx,
    errors: res.errors,
    timeouts: res.timeouts,
    rps: ok / res.duration,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: n > 0 ? sorted[n - 1] : NaN,
    loaderCpuSPer1k: ok > 0 ? ((cpu.user + cpu.system) / 1e6 / ok) * 1000 : NaN,
  };
}

process.on('message', (job: LoadJob) => {
  void runJob(job).then(
    (r) => process.send!(r),
    (err: Error) => process.send!({ type: 'error', message: err.message }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'ready' });
