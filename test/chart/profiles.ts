// Chart values for each mesh profile, as the tests start from them.
import type { MeshName } from '../../src/mesh/types.ts';
import type { Obj } from './helm.ts';

/** What a custom install must give: existing images and the plugin its nodes chain. */
export const CUSTOM_REQUIRED = {
  proxy: { image: 'docker.io/istio/proxyv2:1.27.0', args: ['proxy', 'sidecar'] },
  init: { image: 'docker.io/istio/proxyv2:1.27.0' },
  cni: { pluginType: 'istio-cni' },
};

export const MESHES: MeshName[] = ['istio', 'linkerd', 'custom'];

/** `values` with `mesh` set and, for custom, the required config merged under values.config. */
export function profileValues(mesh: MeshName, values: Obj = {}): Obj {
  const config = mesh === 'custom' ? { ...CUSTOM_REQUIRED, ...(values.config ?? {}) } : (values.config ?? {});
  return { ...values, mesh, config };
}
