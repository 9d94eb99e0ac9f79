/**
 * Which chart and which image a build of meshgate belongs to, read from the chart itself (Chart.yaml and the
 * values' `image`), so the release step (scripts/release.ts), the image's build-info.json and `meshgate version` in a
 * checkout name them the same way and no copy of the chart's defaults can drift from it. The image reference is
 * what the chart renders by default: `[registry/]repository` followed by `@digest`, or `:tag`, or the chart's
 * appVersion (templates/_helpers.tpl).
 */

export interface ChartRelease {
  /** Chart.yaml `name`, e.g. meshgate. */
  chart: string;
  /** Chart.yaml `version`: what `helm install --version` takes. */
  chartVersion: string;
  /** Chart.yaml `appVersion`: the image tag when values leave `image.tag` empty. */
  appVersion: string;
  /** The image reference the chart runs by default, e.g. ghcr.io/meshgate/meshgate:0.1.0. */
  image: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * The chart's release facts from its parsed Chart.yaml and values.yaml; `where` names the chart in errors. Throws
 * naming the missing key: a chart without a version or an image repository cannot be released.
 */
export function chartRelease(chartYaml: unknown, values: unknown, where = 'charts/meshgate'): ChartRelease {
  const c = (chartYaml ?? {}) as Record<string, unknown>;
  const image = ((values as { image?: unknown } | null)?.image ?? {}) as Record<string, unknown>;
  const need = (v: string | undefined, key: string) => {
    if (!v) throw new Error(`${where}: ${key} is missing or not a string`);
    return v;
  };
  const chart = need(str(c.name), 'Chart.yaml name');
  const chartVersion = need(str(c.version), 'Chart.yaml version');
  const appVersion = need(str(c.appVersion), 'Chart.yaml appVersion');
  const repository = need(str(image.repository), 'values.yaml image.repository');
  const registry = str(image.registry);
  const name = registry ? `${registry}/${repository}` : repository;
  const digest = str(image.digest);
  const tag = str(image.tag) || appVersion;
  return { chart, chartVersion, appVersion, image: digest ? `${name}@${digest}` : `${name}:${tag}` };
}
