/**
 * `meshgate version` and `meshgate --version`: meshgate's version, the Node.js running it, the git commit when one
 * was recorded (src/util/version.ts, which the daemons' meshgate_build_info reads too), and the chart and image the
 * build belongs to: a release's build-info.json names them (scripts/release.ts); a checkout reads its own chart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseFlags, UsageError } from '../util/args.ts';
import { chartRelease } from '../util/release-info.ts';
import { COMMANDS } from './commands.ts';
import type { CliIO } from './io.ts';
import { PACKAGE_ROOT, type VersionInfo, versionInfo } from '../util/version.ts';

const USAGE = `usage: meshgate version [-o text|json]

Prints meshgate's version, the chart and image it belongs to, the Node.js version and the flags in force, and the
git commit it was built from (when recorded). A release (the image, the single-file CLI) names the chart and image
it was released with; a checkout names its own chart (charts/meshgate) and the image that chart runs by default.
'meshgate --version' prints the version on one line.

flags:
  -o, --output FORMAT   text | json (default text)

examples:
  meshgate version
  meshgate version -o json | jq -r .commit
`;

/** `meshgate --version`: one line. */
export function versionLine(v: VersionInfo = versionInfo()): string {
  const commit = v.commit ? `commit ${v.commit.slice(0, 12)}, ` : '';
  return `meshgate ${v.version} (${commit}node ${v.node}, ${v.platform})\n`;
}

export async function versionCommand(argv: string[], io: CliIO): Promise<number> {
  let output: string | undefined;
  try {
    const { values } = parseFlags(argv, COMMANDS.version.flags);
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    output = values.output as string | undefined;
    if (output !== undefined && output !== 'text' && output !== 'json')
      throw new UsageError(`--output must be text or json, not "${output}"`);
  } catch (err) {
    io.stderr(`meshgate version: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const v = await withChart(versionInfo());
  if (output === 'json') {
    io.stdout(`${JSON.stringify(v, null, 2)}\n`);
    return 0;
  }
  const commit = v.commit ? `${v.commit} (${v.commitSource})` : 'unknown (no build-info.json)';
  const from = v.releaseSource === 'checkout' ? ' (charts/meshgate of this checkout)' : '';
  io.stdout(
    `meshgate ${v.version}\n  chart:    ${v.chart ?? 'unknown'}${from}\n  image:    ${v.image ?? 'unknown'}${from}\n` +
      `  commit:   ${commit}\n  node:     ${v.node}${v.nodeFlags ? ` ${v.nodeFlags.join(' ')}` : ''}\n  platform: ${v.platform}\n`,
  );
  return 0;
}

/**
 * A release names its chart and image in build-info.json; a checkout has its chart beside package.json, and the
 * image is what that chart runs by default. Neither: both stay unknown.
 */
export async function withChart(
  v: VersionInfo,
  root = PACKAGE_ROOT,
): Promise<VersionInfo & { releaseSource?: 'build-info.json' | 'checkout' }> {
  if (v.chart && v.image) return { ...v, releaseSource: 'build-info.json' };
  const dir = join(root, 'charts', 'meshgate');
  let texts: [string, string];
  try {
    texts = [readFileSync(join(dir, 'Chart.yaml'), 'utf8'), readFileSync(join(dir, 'values.yaml'), 'utf8')];
  } catch {
    return v;
  }
  const { parse } = await import('yaml');
  const r = chartRelease(parse(texts[0]), parse(texts[1]), dir);
  return { ...v, chart: `${r.chart} ${r.chartVersion}`, image: r.image, releaseSource: 'checkout' };
}
