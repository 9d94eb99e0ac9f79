/** meshgate_build_info (src/util/version.ts) in a prom-client registry: the webhook's and the repair controller's. */
import { Gauge, type Registry } from 'prom-client';
import { BUILD_INFO, buildInfoLabels, type VersionInfo } from './version.ts';

export function registerBuildInfo(registry: Registry, v?: VersionInfo): void {
  new Gauge({ ...BUILD_INFO, labelNames: [...BUILD_INFO.labelNames], registers: [registry] }).set(
    buildInfoLabels(v),
    1,
  );
}
