/** The mesh profiles by name, and every container name any of them reserves. */
import { custom } from './custom.ts';
import { istio } from './istio.ts';
import { linkerd } from './linkerd.ts';
import type { MeshName, MeshProfile } from './types.ts';

export const PROFILES: Readonly<Record<MeshName, MeshProfile>> = { istio, linkerd, custom };

/**
 * Names that only a mesh's own containers may carry, whichever mesh meshgate guards, each with the title of the
 * mesh it belongs to (the first profile that uses it), for messages: a container under one of them that is not the
 * real thing is refused (a look-alike `istio-proxy` running busybox would otherwise pass for a proxy with any tool
 * that trusts names, including the meshes' own CNI plugins).
 */
export const RESERVED_NAMES: ReadonlyMap<string, string> = new Map(
  Object.values(PROFILES)
    .reverse()
    .flatMap((p) => Object.values(p.names).map((n) => [n, p.title] as const)),
);

export { type MeshName, type MeshProfile, MESH_NAMES } from './types.ts';
