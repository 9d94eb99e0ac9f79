/**
 * What one of the mesh's ConfigMaps says about its control plane and trust roots (issue 33 §3), read as the webhook
 * reads it (src/kube/learned-images.ts keeps them by ConfigMap): Istio's istio-sidecar-injector[-<revision>] (key
 * `values`, JSON) and mesh config istio[-<revision>] (key `mesh`, YAML); Linkerd's linkerd-config (key `values`,
 * YAML) and linkerd-identity-trust-roots (key `ca-bundle.crt`, the PEM bundle its injector copies into every proxy).
 * The facts themselves are src/mesh/control-plane.ts's; undefined: not such a ConfigMap.
 */
import { parse as parseYaml } from 'yaml';
import {
  type ControlPlaneFacts,
  istioInjectorFacts,
  istioMeshFacts,
  linkerdConfigFacts,
  pemBodies,
} from '../mesh/control-plane.ts';
import { isIstioInjectorConfigMap } from '../mesh/learn.ts';
import type { MeshName } from '../mesh/types.ts';

/** A ConfigMap as the watch delivers it: what the learners read. */
export type ConfigMap = { metadata?: { name?: string; namespace?: string }; data?: Record<string, string> };

/** istiod's mesh config: `istio`, or `istio-<revision>` holding key `mesh`. */
const isIstioMeshConfigMap = (cm: ConfigMap) =>
  (cm.metadata?.name === 'istio' || /^istio-[a-z0-9-]+$/.test(cm.metadata?.name ?? '')) && cm.data?.mesh !== undefined;

const yaml = (text: string) => parseYaml(text, { maxAliasCount: 0 }) as unknown;

export function controlPlaneFromConfigMap(
  mesh: MeshName,
  cm: ConfigMap,
): ControlPlaneFacts | { problem: string } | undefined {
  const name = cm.metadata?.name ?? '';
  const ns = cm.metadata?.namespace ?? '';
  try {
    if (mesh === 'istio') {
      if (isIstioInjectorConfigMap(name)) {
        const values = cm.data?.values;
        return values === undefined ? { problem: 'it has no key values' } : istioInjectorFacts(JSON.parse(values), ns);
      }
      if (isIstioMeshConfigMap(cm)) return istioMeshFacts(yaml(cm.data?.mesh ?? ''));
    }
    if (mesh === 'linkerd') {
      if (name === 'linkerd-config') {
        const values = cm.data?.values;
        return values === undefined ? { problem: 'it has no key values' } : linkerdConfigFacts(yaml(values), ns);
      }
      if (name === 'linkerd-identity-trust-roots') {
        const anchors = pemBodies(cm.data?.['ca-bundle.crt'] ?? '');
        return anchors.length ? { trustAnchors: anchors } : { problem: 'its ca-bundle.crt holds no certificate' };
      }
    }
  } catch (err) {
    return { problem: (err as Error).message.split('\n')[0] };
  }
  return undefined;
}
