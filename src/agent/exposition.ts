/**
 * The node agent's Prometheus registry: counters and gauges with labels, written in the text format (0.0.4), the
 * process metrics the dashboard reads for every component (process_cpu_seconds_total, process_resident_memory_bytes,
 * nodejs_eventloop_lag_p99_seconds) under prom-client's names and help, and meshgate_build_info as every daemon
 * exports it. The webhook and the repair controller use prom-client; the agent runs on every node, where
 * prom-client's import was ~1.6 MiB of its RSS (`npm run bench -- --footprint`), for eight families that change a
 * few times an hour. The text is checked by Prometheus' own parser and promtool (test/agent/exposition.test.ts).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BUILD_INFO, buildInfoLabels, type VersionInfo } from '../util/version.ts';

type Labels = Record<string, string>;
type Kind = 'counter' | 'gauge';

export interface Family {
  name: string;
  help: string;
  type: Kind;
  labelNames: readonly string[];
}

/** A family's series; `L` types the label values (reason codes, outcomes), so their number is bounded by type. */
export interface Series<L extends Labels = Labels> {
  /** Sets the series of these labels (a gauge). */
  set(labels: L, value: number): void;
  set(value: number): void;
  /** Adds to the series of these labels (a counter; 1 by default). */
  inc(labels?: L, by?: number): void;
}

const escapeHelp = (s: string) => s.replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
const escapeLabel = (s: string) => s.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('"', '\\"');
const number = (v: number) =>
  Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v);

class Metric implements Series {
  readonly family: Family;
  /** Label values joined in labelNames order → [labels, value]. */
  readonly #series = new Map<string, [Labels, number]>();

  constructor(family: Family) {
    this.family = family;
  }

  set(a: Labels | number, b?: number): void {
    const [labels, value] = typeof a === 'number' ? [{}, a] : [a, b ?? 0];
    this.#series.set(this.#key(labels), [labels, value]);
  }

  inc(labels: Labels = {}, by = 1): void {
    const key = this.#key(labels);
    this.#series.set(key, [labels, (this.#series.get(key)?.[1] ?? 0) + by]);
  }

  #key(labels: Labels): string {
    for (const k of Object.keys(labels))
      if (!this.family.labelNames.includes(k)) throw new Error(`${this.family.name} has no label ${k}`);
    return this.family.labelNames.map((n) => labels[n] ?? '').join('\u0000');
  }

  text(): string {
    const { name, help, type, labelNames } = this.family;
    let out = `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
    // A family without labels shows 0 before its first change, as prom-client does.
    const zero: Array<[Labels, number]> = [[{}, 0]];
    const series = this.#series.size === 0 && labelNames.length === 0 ? zero : this.#series.values();
    for (const [labels, value] of series) {
      const pairs = labelNames.filter((n) => labels[n] !== undefined).map((n) => `${n}="${escapeLabel(labels[n])}"`);
      out += `${name}${pairs.length ? `{${pairs.join(',')}}` : ''} ${number(value)}\n`;
    }
    return out;
  }
}

export class TextRegistry {
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  readonly #metrics: Metric[] = [];
  readonly #collectors: Array<() => void> = [];

  counter<L extends Labels = Labels>(
    name: string,
    help: string,
    labelNames: readonly (keyof L & string)[] = [],
  ): Series<L> {
    return this.#add({ name, help, type: 'counter', labelNames });
  }

  gauge<L extends Labels = Labels>(
    name: string,
    help: string,
    labelNames: readonly (keyof L & string)[] = [],
  ): Series<L> {
    return this.#add({ name, help, type: 'gauge', labelNames });
  }

  /** Runs before every scrape (process metrics read their values then). */
  beforeScrape(collect: () => void): void {
    this.#collectors.push(collect);
  }

  async metrics(): Promise<string> {
    for (const c of this.#collectors) c();
    // A blank line between families, as prom-client writes them.
    return this.#metrics.map((m) => m.text()).join('\n');
  }

  /** The families, as prom-client's Registry lists them (scripts/metrics-doc.ts). */
  getMetricsAsArray(): Family[] {
    return this.#metrics.map((m) => m.family);
  }

  #add(family: Family): Metric {
    if (this.#metrics.some((m) => m.family.name === family.name)) throw new Error(`${family.name} registered twice`);
    const m = new Metric(family);
    this.#metrics.push(m);
    return m;
  }
}

/** prom-client's process metrics that meshgate's dashboard and alerts read, with prom-client's names and help. */
export function registerProcessMetrics(r: TextRegistry): void {
  const user = r.counter('process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.');
  const system = r.counter('process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.');
  const cpu = r.counter('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.');
  const start = r.gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.');
  const rss = r.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.');
  const heapTotal = r.gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.');
  const heapUsed = r.gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.');
  const external = r.gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.');
  const lag = r.gauge('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.');
  // prom-client's resolution; the histogram is reset at each scrape, so p99 is of the last scrape interval.
  const delays = monitorEventLoopDelay({ resolution: 10 });
  delays.enable();
  start.set(Math.round(Date.now() / 1000 - process.uptime()));
  r.beforeScrape(() => {
    const { user: u, system: s } = process.cpuUsage();
    user.set(u / 1e6);
    system.set(s / 1e6);
    cpu.set((u + s) / 1e6);
    const m = process.memoryUsage();
    rss.set(m.rss);
    heapTotal.set(m.heapTotal);
    heapUsed.set(m.heapUsed);
    external.set(m.external);
    lag.set(delays.count > 0 ? delays.percentile(99) / 1e9 : 0);
    delays.reset();
  });
}

/** meshgate_build_info, as the webhook and the repair controller export it (src/util/build-info.ts). */
export function registerAgentBuildInfo(r: TextRegistry, v?: VersionInfo): void {
  r.gauge(BUILD_INFO.name, BUILD_INFO.help, BUILD_INFO.labelNames).set(buildInfoLabels(v), 1);
}
