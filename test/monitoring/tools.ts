/**
 * Finds and runs the monitoring tools scripts/build-promtool.sh builds: Prometheus' real promtool and
 * monitoring-check (test/monitoring/tools/main.go: the expfmt reference parser and a strict decode into the
 * Prometheus Operator's Go types). The cache key is recomputed exactly as the script does, so a changed module
 * never runs a stale binary; a missing build is an error naming the script, never a skip.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** sha256(go.mod ‖ go.sum ‖ main.go ‖ script), first 12 hex digits, as scripts/build-promtool.sh computes it. */
export function toolsCacheKey(): string {
  const hash = createHash('sha256');
  for (const f of [
    'test/monitoring/tools/go.mod',
    'test/monitoring/tools/go.sum',
    'test/monitoring/tools/main.go',
    'scripts/build-promtool.sh',
  ]) {
    hash.update(readFileSync(join(repoRoot, f)));
  }
  return hash.digest('hex').slice(0, 12);
}

export function toolPath(name: 'promtool' | 'monitoring-check'): string {
  const cache = process.env.MESHGATE_CACHE || join(homedir(), '.cache', 'meshgate');
  const dir = join(cache, `promtool-${toolsCacheKey()}`);
  if (!existsSync(join(dir, '.complete'))) {
    throw new Error(
      `promtool is not built for this source: ${dir}/.complete is missing. Run \`bash scripts/build-promtool.sh\` (npm test does it via scripts/bootstrap.mjs; a few minutes cold).`,
    );
  }
  return join(dir, 'bin', name);
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
