/**
 * Judges a pod as meshgate's two webhooks would at enforce, offline: the mutating decision (src/policy/mutate/decide.ts),
 * its JSON Patch applied, then the validating posture check on the result (src/policy/posture.ts) — what a pod
 * created through the apiserver meets after the mesh's injector. Shared by the corpus test and the test of Istio's
 * own injector outputs.
 */
import jsonpatch from 'fast-json-patch';
import { buildConfig } from '../../src/config/load.ts';
import { compileConfig, type Compiled } from '../../src/config/compile.ts';
import { withProxyIds } from '../../src/config/per-namespace.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { istioOpenShiftProxyIds } from '../../src/mesh/istio-openshift.ts';
import { parsePod } from '../../src/pod/parse.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { readFileSync } from 'node:fs';
import { LINKERD_TRUST_ROOTS } from './load.ts';
import { CORPUS_NODE } from './render.ts';
import { type CorpusMesh, OPENSHIFT_NAMESPACE_ANNOTATIONS } from './sources.ts';

export type Privileges = 'node' | 'restricted';

/** Every node verified, kubelets that run native sidecars: refusals come from the pods, not from the nodes. */
export const CORPUS_NODES = nodeFactsFromState(
  { nodes: { [CORPUS_NODE]: { verified: true, kubeletVersion: 'v1.34.2' } } },
  'corpus',
);

const configs = new Map<string, Compiled>();

/**
 * meshgate's defaults for the mesh (only `apps.privileges` chosen), as a fresh install runs them next to the mesh that
 * injected the corpus: for Linkerd, with the trust anchor it learns from that install's linkerd-identity-trust-roots.
 */
export function corpusConfig(mesh: CorpusMesh, privileges: Privileges): Compiled {
  const key = `${mesh}/${privileges}`;
  const hit = configs.get(key);
  if (hit) return hit;
  const apps = { apps: { privileges } };
  const c =
    mesh === 'linkerd'
      ? compileConfig(
          buildConfig({
            mesh: 'linkerd',
            controlPlane: { trustAnchors: [readFileSync(LINKERD_TRUST_ROOTS, 'utf8')] },
            ...apps,
          }),
        )
      : mesh === 'istio'
        ? compileConfig(buildConfig({ mesh: 'istio', ...apps }))
        : withProxyIds(
            compileConfig(buildConfig({ mesh: 'istio', proxy: { idsFrom: 'openshift' }, ...apps })),
            istioOpenShiftProxyIds(OPENSHIFT_NAMESPACE_ANNOTATIONS),
          );
  configs.set(key, c);
  return c;
}

export type Judged =
  | { admitted: true; reason: string }
  | { admitted: false; reason: string; message: string; at: 'mutate' | 'validate' };

/** The pod through meshgate's mutating then validating webhook. */
export function judgePod(object: unknown, namespace: string, cfg: Compiled): Judged {
  const parsed = parsePod(object, 'pod');
  if (!parsed.ok) return { admitted: false, reason: 'invalid_object', message: parsed.error, at: 'mutate' };
  const d = decide({ pod: parsed.pod, namespace }, CORPUS_NODES, cfg);
  if (d.kind === 'deny') return { admitted: false, reason: d.reason, message: d.message, at: 'mutate' };
  let pod = parsed.pod;
  if (d.kind === 'patch') {
    const patched = jsonpatch.applyPatch(structuredClone(object), structuredClone(d.ops), true, false).newDocument;
    const again = parsePod(patched, 'patched pod');
    if (!again.ok) return { admitted: false, reason: 'invalid_object', message: again.error, at: 'validate' };
    pod = again.pod;
  }
  const posture = checkPosture({ pod, namespace }, CORPUS_NODES, cfg);
  if (!posture.ok) return { admitted: false, reason: posture.reason, message: posture.message, at: 'validate' };
  return { admitted: true, reason: d.reason };
}
