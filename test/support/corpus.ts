/** The pod templates of every workload manifest in shared/corpus/manifests, as the CLI reads them. */
import { readdirSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { podTemplates } from '../../src/manifests/workloads.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';

const MANIFESTS = new URL('../../../shared/corpus/manifests/', import.meta.url);

/** Each template as a pod (its metadata and spec), unparsed: some are refused by the pod parser on purpose. */
export function corpusTemplatePods(): Array<{ metadata: unknown; spec: unknown }> {
  const pods: Array<{ metadata: unknown; spec: unknown }> = [];
  for (const file of readdirSync(MANIFESTS).filter((f) => /\.ya?ml$/.test(f))) {
    for (const doc of parseAllDocuments(readFileSync(new URL(file, MANIFESTS), 'utf8'))) {
      const value = doc.errors.length ? undefined : doc.toJS();
      if (!value?.kind) continue;
      for (const t of podTemplates(value)) pods.push({ metadata: t.template.metadata ?? {}, spec: t.template.spec });
    }
  }
  return pods;
}

/** The first pod template of one corpus manifest (e.g. a mesh injector's real output), as a pod. */
export function corpusPod(file: string): {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: Record<string, unknown>;
  spec: Record<string, unknown>;
} {
  for (const doc of parseAllDocuments(readFileSync(new URL(file, MANIFESTS), 'utf8'))) {
    const value = doc.toJS();
    if (!value?.kind) continue;
    const t = value.kind === 'Pod' ? value : podTemplates(value)[0]?.template;
    if (t) return { apiVersion: 'v1', kind: 'Pod', metadata: t.metadata ?? {}, spec: t.spec };
  }
  throw new Error(`${file}: no pod template`);
}

/** A mesh injector's real output from the corpus as a pod bound to node `good` (test/policy/mutate/fixtures.ts verified). */
export function injectedPod(file: string): Pod {
  const p = corpusPod(file) as unknown as Pod;
  p.metadata = { ...(p.metadata ?? {}), name: 'w', namespace: 'demo' };
  p.spec.nodeName = 'good';
  return p;
}

/**
 * The meshes' own injector outputs that the policy tests change one field at a time: Istio's native-sidecar
 * hello.yaml.injected and Linkerd's inject_emojivoto_pod.golden.yaml (injectedPod).
 */
export const istioInjected = () => injectedPod('istio__hello.yaml.injected');
export const linkerdInjected = () => injectedPod('linkerd__inject_emojivoto_pod.golden.yaml');

/** `p`'s container `name`, init or regular; throws when it has none. */
export function containerNamed(p: Pod, name: string): Container {
  const c = [...(p.spec.initContainers ?? []), ...p.spec.containers].find((x) => x.name === name);
  if (!c) throw new Error(`no container ${name}`);
  return c;
}
