/**
 * What a simulation of the mesh's own injector answers for one pod (template), so `meshgate explain` can judge a
 * Deployment as its pods will arrive at meshgate: after the mesh's injector ran (issue 34 §5). The simulation is a
 * model of the injector, not the injector: `differs` lists, in words, where the model is known to be narrower, and
 * the CLI prints them with every simulated answer.
 */

export type Json = Record<string, unknown>;

/** A pod or pod template as JSON: the document's own objects are never changed, a simulation returns copies. */
export interface PodJson {
  metadata?: Json;
  spec?: Json;
}

export type Simulated =
  | {
      kind: 'injected';
      /** The pod as the injector would return it. */
      pod: PodJson;
      /** Which configuration was simulated, e.g. "Istio's injector (ConfigMap istio-system/istio-sidecar-injector)". */
      by: string;
      /** Where the model may differ from the real injector for this configuration. */
      differs: string[];
    }
  | { kind: 'not-injected'; by: string; why: string }
  | { kind: 'unavailable'; why: string };

/** What the caller knows of the cluster that the injectors read besides the pod. */
export interface SimulationContext {
  namespace: string;
  /** The namespace's labels, when known (live); offline the injector's namespace selector is assumed to match. */
  namespaceLabels?: Readonly<Record<string, string>>;
  /** The namespace's annotations, when known (live): Linkerd reads linkerd.io/inject and its config there. */
  namespaceAnnotations?: Readonly<Record<string, string>>;
  /** Whether every node (or the pod's node) runs a kubelet ≥ 1.33, as istiod's ENABLE_NATIVE_SIDECARS=auto asks. */
  nativeSidecars: boolean;
  /** The workload that owns the template (kind and name), as the injectors read the pod's owner. */
  owner?: { apiVersion: string; kind: string; name: string };
}

export const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
export const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const strMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj(v))) if (typeof x === 'string') out[k] = x;
  return out;
};

/** Go's fmt.Sprint of a value the templates paste: numbers without a fraction as integers, nil as "<nil>". */
export function sprint(v: unknown): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** Go templates' truth: false, 0, nil, and empty strings, maps and lists are false. */
export function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** A deep copy of JSON. */
export const copy = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
