/**
 * Cilium's agent, with `cni.exclusive=true` (its chart's default), takes the conf dir for itself: every other
 * `.conf`/`.conflist`/`.json` file is renamed to `<name>.cilium_bak` on each pass of its CNI config controller
 * (daemon/cmd/cni/config.go `cleanupOtherCNI`, run after it writes its own `05-cilium.conflist`), and since the
 * controller re-runs on every event in the dir, a mesh installer's file is renamed again as soon as it reappears. In
 * that mode it also rewrites its own file whenever the dir changes, dropping a plugin a mesh installer appended to it
 * (its watch is armed only with cni.exclusive, "to allow rewriting of the Cilium CNI configuration by another plugin
 * (e.g. Istio)"). Either way the mesh plugin is gone and nothing fails: this says so, and names the fix, instead of
 * the generic "plugin missing".
 */
import { parseNetworkFile } from './parse.ts';
import type { LibcniLine, Snapshot } from './types.ts';

export const CILIUM_SUFFIX = '.cilium_bak';
/** The plugin type of Cilium's own chain. */
export const CILIUM_PLUGIN = 'cilium-cni';

/** `10-calico.conflist.cilium_bak` → `10-calico.conflist`, when the rest is a conf file name; else undefined. */
export function renamedFrom(name: string): string | undefined {
  if (!name.endsWith(CILIUM_SUFFIX)) return undefined;
  const base = name.slice(0, -CILIUM_SUFFIX.length);
  return /\.(conf|conflist|json)$/.test(base) ? base : undefined;
}

/**
 * Why the mesh plugin is missing when Cilium renamed files: the renamed files that held it (as libcni reads them),
 * or, when the loaded chain is Cilium's, that its exclusive mode rewrites that file too. Undefined when no file was
 * renamed, or nothing points at Cilium.
 */
export function ciliumRenamed(
  snapshot: Snapshot,
  pluginType: string,
  chain: readonly string[],
  line: LibcniLine,
): string | undefined {
  const renamed = snapshot.renamed ?? [];
  if (renamed.length === 0) return undefined;
  const holding = renamed.filter((f) => {
    const original = renamedFrom(f.name);
    if (!original || f.content === undefined) return false;
    const parsed = parseNetworkFile(original, f.content, { line });
    return parsed.ok && parsed.network.plugins.some((p) => p.type === pluginType);
  });
  if (holding.length > 0) {
    const names = holding.map((f) => `${renamedFrom(f.name)} → ${f.name}`).join(', ');
    return `Cilium renamed the mesh's file(s) away (${names}), so the runtime no longer loads ${pluginType}`;
  }
  if (!chain.includes(CILIUM_PLUGIN)) return undefined;
  return (
    `the runtime loads Cilium's chain, and Cilium renamed ${renamed.map((f) => f.name).join(', ')}: in exclusive ` +
    `mode it also rewrites its own file on every change, dropping ${pluginType}`
  );
}
