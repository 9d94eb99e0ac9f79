/**
 * The mesh's injector in front of meshgate, for `meshgate explain` (issue 34 §5): a Deployment's template has no
 * proxy yet — the mesh's injector adds it when each pod is created — so explain first simulates that injector from
 * the mesh's own ConfigMaps (live: the namespaces of config.learnImages; offline: `--mesh-config FILE`, the ConfigMaps
 * as `kubectl get cm -o yaml` writes them), then judges the result with meshgate's core. Istio: every revision's
 * istio-sidecar-injector[-<rev>] (config + values) and istio[-<rev>] (mesh); Linkerd: linkerd-config (values).
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import type { Compiled } from '../config/compile.ts';
import type { ConfigMap } from '../kube/learned-images.ts';
import { type IstioInjector, readIstioInjector, revisionOfName } from '../mesh/simulate/istio-config.ts';
import { simulateIstio } from '../mesh/simulate/istio-inject.ts';
import { type LinkerdInjector, readLinkerdInjector, simulateLinkerd } from '../mesh/simulate/linkerd-inject.ts';
import type { PodJson, Simulated, SimulationContext } from '../mesh/simulate/types.ts';
import { isIstioInjectorConfigMap, isLinkerdConfigMap } from '../mesh/learn.ts';
import { UsageError } from '../util/args.ts';

export interface MeshInjectors {
  istio: Map<string, IstioInjector>;
  linkerd?: LinkerdInjector;
  /** ConfigMaps of the mesh that could not be read, in words. */
  problems: string[];
  /** Every ConfigMap read, so the images they name are learned as the webhook learns them. */
  configMaps: ConfigMap[];
}

const parseText = (text: string | undefined, json: boolean): unknown =>
  text === undefined ? undefined : json ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 0 });

/** The injectors the mesh's ConfigMaps describe. */
export function injectorsOf(cms: readonly ConfigMap[]): MeshInjectors {
  const out: MeshInjectors = { istio: new Map(), problems: [], configMaps: [...cms] };
  const meshOf = (ns: string | undefined, rev: string) =>
    cms.find((c) => c.metadata?.name === (rev ? `istio-${rev}` : 'istio') && c.metadata?.namespace === ns)?.data?.mesh;
  for (const cm of cms) {
    const name = cm.metadata?.name ?? '';
    const where = `ConfigMap ${cm.metadata?.namespace ? `${cm.metadata.namespace}/` : ''}${name}`;
    try {
      if (isIstioInjectorConfigMap(name)) {
        const rev = revisionOfName(name);
        const inj = readIstioInjector(
          { name, namespace: cm.metadata?.namespace },
          parseText(cm.data?.config, false),
          parseText(cm.data?.values, true),
          parseText(meshOf(cm.metadata?.namespace, rev), false),
        );
        if ('problem' in inj) out.problems.push(inj.problem);
        else out.istio.set(rev, inj);
      } else if (isLinkerdConfigMap(name)) {
        const inj = readLinkerdInjector({ name, namespace: cm.metadata?.namespace }, parseText(cm.data?.values, false));
        if ('problem' in inj) out.problems.push(inj.problem);
        else out.linkerd = inj;
      }
    } catch (err) {
      out.problems.push(`${where}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return out;
}

/** `--mesh-config FILE`: ConfigMaps as YAML documents, a `kind: List` of them, or both. */
export function readMeshConfigFile(path: string): ConfigMap[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--mesh-config ${path}: ${(err as Error).message}`);
  }
  const out: ConfigMap[] = [];
  for (const [i, doc] of parseAllDocuments(text, { maxAliasCount: 0 } as never).entries()) {
    if (doc.errors.length) throw new UsageError(`--mesh-config ${path}: document ${i + 1}: ${doc.errors[0].message}`);
    const v = doc.toJS() as { kind?: string; items?: unknown[] } | null;
    if (!v) continue;
    const items = v.kind === 'List' && Array.isArray(v.items) ? v.items : [v];
    for (const item of items) if ((item as { kind?: string }).kind === 'ConfigMap') out.push(item as ConfigMap);
  }
  if (out.length === 0) throw new UsageError(`--mesh-config ${path}: no ConfigMap in it`);
  return out;
}

/** Which istiod revision's webhook a pod reaches (istio-discovery's four webhooks); undefined: none selects it. */
function istioRevision(pod: PodJson, nsLabels: Readonly<Record<string, string>> | undefined): string | undefined {
  const labels = ((pod.metadata?.labels ?? {}) as Record<string, string>) ?? {};
  if (!nsLabels) return labels['istio.io/rev'] ?? '';
  const injection = nsLabels['istio-injection'];
  if (injection === 'enabled') return labels['sidecar.istio.io/inject'] === 'false' ? undefined : '';
  if (injection !== undefined) return undefined;
  if (nsLabels['istio.io/rev'] !== undefined)
    return labels['sidecar.istio.io/inject'] === 'false' ? undefined : nsLabels['istio.io/rev'];
  if (labels['istio.io/rev'] !== undefined) return labels['istio.io/rev'];
  return labels['sidecar.istio.io/inject'] === 'true' ? '' : undefined;
}

/** The mesh's injection of one pod template, as the configuration's mesh does it. */
export function simulateMesh(inj: MeshInjectors, cfg: Compiled, pod: PodJson, ctx: SimulationContext): Simulated {
  const mesh = cfg.config.mesh;
  if (mesh === 'istio') {
    const rev = istioRevision(pod, ctx.namespaceLabels);
    if (rev === undefined)
      return {
        kind: 'not-injected',
        by: "Istio's injector",
        why: `no istiod webhook selects it (namespace ${ctx.namespace} has neither istio-injection=enabled nor istio.io/rev, and the pod does not opt in)`,
      };
    const i = inj.istio.get(rev);
    if (!i) {
      const known = [...inj.istio.keys()].map((r) => r || 'default').join(', ') || 'none';
      return {
        kind: 'unavailable',
        why: `no ConfigMap istio-sidecar-injector${rev ? `-${rev}` : ''} to simulate revision ${rev || 'default'} from (revisions read: ${known})`,
      };
    }
    const forced = String(
      (i.values.pilot as { env?: Record<string, unknown> } | undefined)?.env?.ENABLE_NATIVE_SIDECARS ?? 'auto',
    );
    const native = forced === 'true' ? true : forced === 'false' ? false : ctx.nativeSidecars;
    return simulateIstio(i, pod, { ...ctx, nativeSidecars: native });
  }
  if (mesh === 'linkerd') {
    if (!inj.linkerd) return { kind: 'unavailable', why: 'no ConfigMap linkerd-config to simulate from' };
    return simulateLinkerd(inj.linkerd, pod, ctx);
  }
  return { kind: 'unavailable', why: 'mesh custom: meshgate injects the proxy itself' };
}
