/**
 * The benchmark's workload, from the shared corpus (../shared/corpus beside the clone): every pod CREATE review
 * in admission/*.json (bare AdmissionRequests wrapped in a v1 review) and every pod template found in
 * manifests/*.yaml wrapped as a pods CREATE review, as the apiserver would send it. Route C's bodies are the
 * same pods with meshgate's own patch applied offline, so /validate judges realistic injected pods.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { podTemplates, notAnObject } from '../src/manifests/workloads.ts';
import { mutate } from '../src/admission/mutate.ts';
import type { MutateDeps } from '../src/admission/mutate.ts';
import { nodeFactsFromState } from '../src/facts/node-state.ts';
import { testConfig } from '../test/support/config.ts';

export const CORPUS_DIR = fileURLToPath(new URL('../../shared/corpus/', import.meta.url));

export interface Review {
  apiVersion: string;
  kind: 'AdmissionReview';
  request: {
    uid: string;
    kind: { group: string; version: string; kind: string };
    resource: { group: string; version: string; resource: string };
    name?: string;
    namespace?: string;
    operation: 'CREATE';
    userInfo?: { username?: string };
    object: Record<string, unknown>;
    [key: string]: unknown;
  };
}

export interface Sample {
  /** Corpus file (and template pointer for manifests). */
  source: string;
  review: Review;
}

type Obj = Record<string, unknown>;

export function podReview(uid: string, pod: Obj, namespace: string): Review {
  const meta = (pod.metadata ?? {}) as Obj;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: typeof meta.name === 'string' ? meta.name : undefined,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: pod,
    },
  };
}

function isPodCreate(raw: Obj): boolean {
  const r = raw.request as Obj | undefined;
  const res = r?.resource as Obj | undefined;
  return r?.operation === 'CREATE' && res?.resource === 'pods' && !r?.subResource && typeof r?.object === 'object';
}

function fromAdmission(): Sample[] {
  const dir = `${CORPUS_DIR}admission/`;
  const out: Sample[] = [];
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const raw = JSON.parse(readFileSync(dir + name, 'utf8')) as Obj;
    const review = (
      raw.kind === 'AdmissionReview'
        ? raw
        : { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: raw }
    ) as Obj;
    if (isPodCreate(review)) out.push({ source: `admission/${name}`, review: review as unknown as Review });
  }
  return out;
}

function fromManifests(): Sample[] {
  const dir = `${CORPUS_DIR}manifests/`;
  const out: Sample[] = [];
  for (const name of readdirSync(dir)
    .filter((f) => /\.ya?ml/.test(f))
    .sort()) {
    const docs = parseAllDocuments(readFileSync(dir + name, 'utf8'));
    for (const doc of Array.isArray(docs) ? docs : [docs]) {
      if (doc.errors.length > 0) continue; // the corpus holds one invalid YAML on purpose
      const js = doc.toJS() as unknown;
      if (notAnObject(js)) continue;
      for (const t of podTemplates(js as Obj)) {
        const meta = { ...(t.template.metadata ?? {}) } as Obj;
        if (t.kind !== 'Pod') meta.name = `${t.name}-7d9c8b5f4-x2k9q`; // as a ReplicaSet names its pods
        const ns = t.namespace ?? (typeof meta.namespace === 'string' ? meta.namespace : 'default');
        const pod = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { ...meta, namespace: ns },
          spec: structuredClone(t.template.spec),
        };
        out.push({
          source: `manifests/${name}#${t.pointer || '/'}`,
          review: podReview(`bench-${out.length}`, pod, ns),
        });
      }
    }
  }
  return out;
}

/** All pod CREATE reviews of the corpus, in a fixed order. */
export function loadSamples(): Sample[] {
  const all = [...fromAdmission(), ...fromManifests()];
  if (all.length < 10)
    throw new Error(`only ${all.length} pod reviews found under ${CORPUS_DIR}: is ../shared/corpus there?`);
  return all;
}

/** Node names the corpus pods are pinned to (spec.nodeName), so the bench can mark them verified. */
export function pinnedNodes(samples: Sample[]): string[] {
  const names = samples
    .map((s) => (s.review.request.object.spec as Obj | undefined)?.nodeName)
    .filter((n): n is string => typeof n === 'string');
  return [...new Set(names)].sort();
}

export interface Workload {
  mutate: Sample[];
  validate: Sample[];
  /** Decision kinds and reasons of the mutate bodies, e.g. { "patch:affinity_verified": 40 }. */
  mix: Record<string, number>;
}

/**
 * Computes each pod's verdict offline. Pods in system namespaces are dropped: the chart's namespaceSelector
 * keeps the apiserver from ever sending them. Bodies for /validate are the patched pods (patch decisions only).
 */
export function buildWorkload(samples: Sample[], deps: MutateDeps): Workload {
  const mix: Record<string, number> = {};
  const validate: Sample[] = [];
  const sent: Sample[] = [];
  for (const s of samples) {
    if (deps.config.config.systemNamespaces.includes(s.review.request.namespace ?? '')) continue;
    sent.push(s);
    const v = mutate(s.review.request as never, deps);
    const key = `${v.kind}:${v.reason}`;
    mix[key] = (mix[key] ?? 0) + 1;
    if (v.kind !== 'patch') continue;
    // Op values are meshgate's shared, frozen templates, and later ops add to them: the pod gets copies.
    const injected = jsonpatch.applyPatch(
      structuredClone(s.review.request.object),
      structuredClone(v.ops) as Operation[],
      true,
      false,
    ).newDocument;
    validate.push({ source: s.source, review: { ...s.review, request: { ...s.review.request, object: injected } } });
  }
  return { mutate: sent, validate, mix };
}

/**
 * The workload the HTTP comparisons serve (--peers, --before, --decompose): every corpus review under the custom
 * profile, with the nodes the pods are pinned to verified (kubelet v1.34.1), as their servers are told.
 */
export function corpusWorkload(): { verifiedNodes: string[]; work: Workload } {
  const samples = loadSamples();
  const verifiedNodes = pinnedNodes(samples);
  const facts = nodeFactsFromState(
    { nodes: Object.fromEntries(verifiedNodes.map((n) => [n, { verified: true, kubeletVersion: 'v1.34.1' }])) },
    'bench',
  );
  return { verifiedNodes, work: buildWorkload(samples, { config: testConfig('custom'), nodes: facts }) };
}
