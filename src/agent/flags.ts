/**
 * Validation of the CNI flags shared by `meshgate node-agent` and `meshgate check-node`, so both accept the same
 * spellings. Throws UsageError (exit 2). Kept free of heavy imports: check-node must start fast.
 */
import { UsageError } from '../cli/args.ts';
import { isLibcniChoice } from '../cni/libcni-line.ts';
import { parseRuntimeVersion } from '../cni/runtime-version.ts';
import { LIBCNI_LINES, type LibcniLine, RUNTIMES, type Runtime } from '../cni/types.ts';
import { parseDuration } from './duration.ts';

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
  if (ms === undefined) throw new UsageError(`${flag} must be a duration like 100ms, 30s or 5m, got "${value}"`);
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
