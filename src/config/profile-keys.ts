/**
 * Which keys of meshgate's configuration (config/schema.ts) a mesh profile does not take, and which keys earlier
 * versions had. Messages, not shape: config/load.ts says them when a file sets such a key, and
 * scripts/values-schema.ts turns NOT_USED into the chart schema's per-mesh closures (values.schema.json `allOf`), so
 * helm refuses the same keys.
 */
import type { MeshName } from '../mesh/types.ts';

/** Why a key is absent from a profile, for a better message than "unknown key". */
const COMPANION_ONLY =
  "the mesh's own injector injects the proxy and its init container; meshgate recognises them by recognisedImages";
export const NOT_USED: Record<string, Partial<Record<MeshName, string>>> = {
  'proxy.image': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'proxy.args': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'proxy.env': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'proxy.ports': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'proxy.resources': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'proxy.volumeMounts': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'init.image': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'init.command': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'init.args': { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  volumes: { istio: COMPANION_ONLY, linkerd: COMPANION_ONLY },
  'injection.nativeSidecar': {
    istio: "the mesh's injector decides whether its proxy is a native sidecar",
    linkerd: "the mesh's injector decides whether its proxy is a native sidecar",
  },
  'proxy.gid': { linkerd: "Linkerd's rules exempt the proxy UID only" },
  'proxy.idsFrom': {
    linkerd: "Linkerd's injector writes the configured proxy UID on every platform",
    custom: 'meshgate injects the proxy with the configured uid and gid',
  },
  recognisedImages: { custom: 'meshgate injects from its own templates and recognises its containers by them' },
  learnImages: { custom: 'meshgate injects from its own templates: there is no mesh injector to learn from' },
  controlPlane: {
    custom: "meshgate's own proxy is its template, field by field: its configuration names the control plane",
  },
};
/** Keys of earlier versions, with what replaced them. */
export const REMOVED: Record<string, string> = {
  'injection.enabled':
    'removed: derived from mesh (istio and linkerd: the mesh injects and meshgate adjusts; custom: meshgate injects)',
  'injection.recognisedInitContainers': 'removed: the profile names the init container (init.name)',
  'injection.recognisedProxyContainers': 'removed: the profile names the proxy (proxy.name)',
  'injection.recognisedValidatorContainers': 'removed: the profile names the validator (validator.name)',
};
