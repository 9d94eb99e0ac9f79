/**
 * Pod-level inputs Istio reads to change its proxy's program, bootstrap or control plane. pilot-agent reads the
 * pod's `proxy.istio.io/config` annotation at start (from the downward API file /etc/istio/pod/annotations, so its
 * value when the proxy starts, not at admission: an UPDATE is judged again by the validating webhook), merged over
 * the mesh's default ProxyConfig (pilot/cmd/pilot-agent/config/config.go ConstructProxyConfig); the injector turns
 * `sidecar.istio.io/bootstrapOverride` into a ConfigMap volume and ISTIO_BOOTSTRAP_OVERRIDE.
 */
import { parse as parseYaml } from 'yaml';
import type { Pod } from '../../contract/pod.ts';
import { isObject } from '../../util/json.ts';
import { proxyConfigProblem } from './istio-env.ts';
import { type ControlPlane, isControlPlaneAddress } from '../../mesh/control-plane.ts';
import type { Problem } from './types.ts';

export const PROXY_CONFIG_ANNOTATION = 'proxy.istio.io/config';
const BOOTSTRAP_OVERRIDE = 'sidecar.istio.io/bootstrapOverride';

/** A ProxyConfig is a few hundred bytes; 64 KiB is far beyond any real one and bounds the YAML parse. */
const MAX_PROXY_CONFIG_BYTES = 64 * 1024;

/**
 * pilot-agent sets discoveryAddress from this pod annotation, read from the downward API at start, over everything
 * else (pilot/cmd/pilot-agent/config/config.go applyAnnotations).
 */
export const DISCOVERY_ADDRESS_ANNOTATION = 'sidecar.istio.io/discoveryAddress';

/** Why the pod's annotations would make Istio's proxy run or read what the pod supplies; undefined when not. */
export function istioPodProblem(pod: Pod, cp: ControlPlane): Problem {
  const a = pod.metadata?.annotations ?? {};
  if (a[BOOTSTRAP_OVERRIDE] !== undefined)
    return `annotation ${BOOTSTRAP_OVERRIDE}=${a[BOOTSTRAP_OVERRIDE]}: Envoy would start from a bootstrap the pod supplies`;
  const discovery = a[DISCOVERY_ADDRESS_ANNOTATION];
  if (discovery !== undefined && !isControlPlaneAddress(cp, discovery))
    return (
      `annotation ${DISCOVERY_ADDRESS_ANNOTATION}=${discovery}: pilot-agent would take its configuration from there, ` +
      `not from the installed control plane (${cp.addresses.join(', ')})`
    );
  const raw = a[PROXY_CONFIG_ANNOTATION];
  if (raw === undefined) return undefined;
  if (raw.length > MAX_PROXY_CONFIG_BYTES)
    return `annotation ${PROXY_CONFIG_ANNOTATION} is ${raw.length} bytes, more than the ${MAX_PROXY_CONFIG_BYTES} meshgate reads`;
  let value: unknown;
  try {
    // pilot-agent reads it as YAML (mesh.ApplyProxyConfig), of which JSON is a subset.
    value = parseYaml(raw, { maxAliasCount: 0 });
  } catch (err) {
    return `annotation ${PROXY_CONFIG_ANNOTATION} is not YAML pilot-agent could read: ${(err as Error).message.split('\n')[0]}`;
  }
  if (value === null || value === undefined) return undefined;
  if (!isObject(value)) return `annotation ${PROXY_CONFIG_ANNOTATION} is not a ProxyConfig mapping`;
  const fields = Object.keys(value).map(camel);
  const refused = fields.filter((f) => !POD_SETTABLE.has(f));
  if (refused.length)
    return (
      `annotation ${PROXY_CONFIG_ANNOTATION} sets ${refused.join(', ')}: a pod may set only ` +
      `${[...POD_SETTABLE].join(', ')} (the rest choose the proxy's binary, bootstrap, control plane, identity, ` +
      'or where it sends telemetry from outside the redirect)'
    );
  const problem = proxyConfigProblem(
    JSON.stringify(Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), v]))),
    cp,
  );
  return problem ? `annotation ${PROXY_CONFIG_ANNOTATION} ${problem}` : undefined;
}

/** proto field names as pilot-agent accepts them: `hold_application_until_proxy_starts` is the same field. */
function camel(name: string): string {
  return name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/**
 * ProxyConfig fields a pod may set for its own proxy: how it starts and drains, its thread count and its stats, and
 * proxyMetadata (judged entry by entry as the variables it becomes). Every other field chooses the Envoy binary, its
 * bootstrap or configuration directory, the control plane, the proxy's identity, or an address the proxy dials
 * directly (tracing, stats and access-log sinks), which is traffic from the exempt UID, outside the redirect.
 */
const POD_SETTABLE: ReadonlySet<string> = new Set([
  'concurrency',
  'drainDuration',
  'terminationDrainDuration',
  'holdApplicationUntilProxyStarts',
  'proxyStatsMatcher',
  'extraStatTags',
  'statNameLength',
  'fileFlushInterval',
  'fileFlushMinSizeKb',
  'interceptionMode',
  'proxyMetadata',
]);
