/**
 * Validation of the CNI flags shared by `meshgate node-agent` and `meshgate check-node`, so both accept the same
 * spellings. Throws UsageError (exit 2). Kept free of heavy imports: check-node must start fast.
 */
import { UsageError } from '../util/args.ts';
import { isLibcniChoice } from '../cni/libcni-line.ts';
import { THICK_CONF_DIR } from '../cni/multus.ts';
import { parseRuntimeVersion } from '../cni/runtime-version.ts';
import { LIBCNI_LINES, type LibcniLine, type PathAlias, RUNTIMES, type Runtime } from '../cni/types.ts';
import { parseDuration } from '../util/duration.ts';

/** The runtime's default plugin dir. */
export const DEFAULT_BIN_DIR = '/opt/cni/bin';

/** `--cni-bin-dir a --cni-bin-dir b,c` → [a, b, c]; default /opt/cni/bin. Order matters: the first match wins. */
export function splitDirs(values: string[] | undefined): string[] {
  const dirs = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((d) => d.trim())
    .filter(Boolean);
  return dirs.length > 0 ? dirs : [DEFAULT_BIN_DIR];
}

/** `--multus-dir`: Multus' dirs the agent reads besides the conf dir (repeatable or comma-separated; none by default). */
export function multusDirs(values: string[] | undefined): string[] {
  const dirs = (values ?? []).flatMap((v) => v.split(',')).map((d) => d.trim());
  const bad = dirs.find((d) => !d.startsWith('/'));
  if (bad !== undefined) throw new UsageError(`--multus-dir must be an absolute path, got "${bad}"`);
  return dirs;
}

/**
 * `--multus-path FROM=TO` (repeatable): Multus' configuration names FROM where the host has TO (the thick plugin's
 * daemon runs in a container). The alias ${THICK_CONF_DIR}=<conf dir> is added unless one is given for it: the
 * upstream thick daemonset and OpenShift both mount the runtime's conf dir there.
 */
export function multusPaths(values: string[] | undefined, confDir: string): PathAlias[] {
  const paths = (values ?? []).map((v) => {
    const eq = v.indexOf('=');
    const from = v.slice(0, eq);
    const to = v.slice(eq + 1);
    if (eq < 0 || !from.startsWith('/') || !to.startsWith('/'))
      throw new UsageError(`--multus-path must be FROM=TO, two absolute paths, got "${v}"`);
    return { from, to };
  });
  return paths.some((p) => p.from === THICK_CONF_DIR) ? paths : [...paths, { from: THICK_CONF_DIR, to: confDir }];
}

export function parseRuntime(value: string): Runtime {
  if (!(RUNTIMES as readonly string[]).includes(value)) {
    throw new UsageError(`--runtime must be one of ${RUNTIMES.join(', ')}, got "${value}"`);
  }
  return value as Runtime;
}

/**
 * check-node's `--runtime`: a runtime name, or a Node's containerRuntimeVersion (`containerd://2.1.4`,
 * `cri-o://1.31.2`), which also tells the libcni line (src/cni/libcni-line.ts).
 */
export function parseRuntimeOrVersion(value: string): { runtime: Runtime; runtimeVersion?: string } {
  if (!value.includes('://')) return { runtime: parseRuntime(value) };
  const { runtime } = parseRuntimeVersion(value);
  if (!runtime) {
    throw new UsageError(
      `--runtime "${value}" is not a containerd:// or cri-o:// version (as a Node's containerRuntimeVersion says)`,
    );
  }
  return { runtime, runtimeVersion: value };
}

/** `--libcni`: a line, or auto (from the runtime's version; unknown → every line must agree). */
export function parseLibcni(value: string): LibcniLine | 'auto' {
  if (!isLibcniChoice(value))
    throw new UsageError(`--libcni must be auto or one of ${LIBCNI_LINES.join(', ')}, got "${value}"`);
  return value;
}

export function parseCount(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number (0 = no limit), got "${value}"`);
  return Number(value);
}

export function durationFlag(flag: string, value: string): number {
  const ms = parseDuration(value);
  if (typeof ms === 'string') throw new UsageError(`${flag}: ${ms}`);
  return ms;
}

/**
 * The mesh CNI plugin type the agent checks: the config's `cni.pluginType` (its mesh profile's, e.g. istio-cni).
 * A --plugin-type given as well must name the same plugin: a node agent checking for linkerd-cni while meshgate
 * guards Istio would verify nodes whose plugin redirects to the wrong proxy, so the mismatch stops it at startup.
 * Without a config, --plugin-type alone is required.
 */
export function resolvePluginType(
  explicit: string | undefined,
  config: { mesh: string; cni: { pluginType: string } } | undefined,
  source: string,
): string {
  if (!config) {
    if (!explicit)
      throw new UsageError(
        '--config FILE or --mesh NAME is required (or --plugin-type TYPE alone, e.g. istio-cni, linkerd-cni)',
      );
    return explicit;
  }
  const fromConfig = config.cni.pluginType;
  if (explicit !== undefined && explicit !== fromConfig) {
    throw new UsageError(
      `--plugin-type ${explicit} differs from ${fromConfig}, the CNI plugin of mesh ${config.mesh} in ${source} ` +
        '(cni.pluginType): the agent must check the plugin the mesh really uses; drop --plugin-type or fix the config',
    );
  }
  return fromConfig;
}
