/**
 * Finds and runs the monitoring tools scripts/build-promtool.sh builds: Prometheus' real promtool and
 * monitoring-check (test/monitoring/tools/main.go: the expfmt reference parser and a strict decode into the
 * Prometheus Operator's Go types). The cache key is computed from the script's inputs (test/support/build-cache.ts),
 * so a changed module never runs a stale binary; a missing build is an error naming the script, never a skip.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildCacheKey, finishedBuild } from '../support/build-cache.ts';

/** scripts/build-promtool.sh's key inputs, in its order. */
const TOOLS_INPUTS = ['go.mod', 'go.sum', 'main.go']
  .map((f) => `test/monitoring/tools/${f}`)
  .concat('scripts/build-promtool.sh');

export function toolsCacheKey(): string {
  return buildCacheKey(TOOLS_INPUTS);
}

export function toolPath(name: 'promtool' | 'monitoring-check'): string {
  return join(finishedBuild('promtool', TOOLS_INPUTS, 'scripts/build-promtool.sh', 'a few minutes cold'), 'bin', name);
}

export interface ToolRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runTool(name: 'promtool' | 'monitoring-check', args: string[], input?: string, cwd?: string): ToolRun {
  const res = spawnSync(toolPath(name), args, {
    input,
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error) throw res.error;
  return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

export interface Series {
  labels: Record<string, string>;
  /** A counter's or gauge's value; a histogram's sample count. */
  value: number;
  /** A histogram's bucket bounds as Prometheus writes them ("0.005", "+Inf"). */
  buckets?: string[];
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  series: Series[];
}

/** Parses Prometheus' text format with the reference parser (prometheus/common/expfmt); throws on a parse error. */
export function parseExposition(text: string): Map<string, Family> {
  const res = runTool('monitoring-check', ['expfmt'], text);
  if (res.code !== 0) throw new Error(`the exposition does not parse: ${res.stderr}`);
  return new Map((JSON.parse(res.stdout) as Family[]).map((f) => [f.name, f]));
}

/** The value of the series of `family` whose labels include `labels`; throws unless exactly one matches. */
export function metricValue(
  families: Map<string, Family>,
  family: string,
  labels: Record<string, string> = {},
): number {
  const f = families.get(family);
  if (!f) throw new Error(`no family ${family}`);
  const hits = f.series.filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length !== 1)
    throw new Error(
      `${family}${JSON.stringify(labels)}: ${hits.length} series match (${JSON.stringify(f.series.map((s) => s.labels))})`,
    );
  return hits[0].value;
}

/**
 * `promtool check metrics` (promlint): the problems it reports, one per family, as "name: problem". It exits 3
 * when it found problems and 1 when the text does not parse; the latter throws.
 */
export function lintMetrics(text: string): string[] {
  const res = runTool('promtool', ['check', 'metrics'], text);
  if (res.code !== 0 && res.code !== 3)
    throw new Error(`promtool check metrics failed (exit ${res.code}): ${res.stderr}`);
  return `${res.stdout}${res.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}
