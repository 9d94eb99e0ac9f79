/**
 * Finds pod templates in Kubernetes manifests: a Pod itself, the `spec.template` of every workload controller,
 * a CronJob's `spec.jobTemplate.spec.template`, and the items of a `kind: List`. Each hit is returned with the
 * JSON Pointer of the template inside the document, so the core's JSON Patch ops can be re-rooted onto it.
 */
import { isObject } from '../util/json.ts';

export interface PodTemplateRef {
  /** JSON Pointer of the pod (template) inside the document: "" for a Pod, "/spec/template" for a Deployment. */
  pointer: string;
  kind: string;
  name: string;
  namespace?: string;
  template: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
}

const TEMPLATE_AT: Record<string, string[]> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
  Pod: [],
};

type Obj = Record<string, unknown>;

/** Why a document is not a Kubernetes object, or undefined when it is one. */
export function notAnObject(doc: unknown): string | undefined {
  if (!isObject(doc)) return `expected a mapping, got ${Array.isArray(doc) ? 'a sequence' : typeof doc}`;
  if (typeof doc.apiVersion !== 'string' || doc.apiVersion === '') return 'missing apiVersion';
  if (typeof doc.kind !== 'string' || doc.kind === '') return 'missing kind';
  return undefined;
}

export function podTemplates(doc: Obj, base = ''): PodTemplateRef[] {
  const kind = doc.kind as string;
  if (kind === 'List' && Array.isArray(doc.items)) {
    return doc.items.flatMap((item, i) =>
      isObject(item) && !notAnObject(item) ? podTemplates(item, `${base}/items/${i}`) : [],
    );
  }
  const path = TEMPLATE_AT[kind];
  if (!path) return [];
  let node: unknown = doc;
  for (const key of path) node = isObject(node) ? node[key] : undefined;
  // A template without a containers list is not a pod template meshgate can patch; it passes through.
  if (!isObject(node) || !isObject(node.spec) || !Array.isArray(node.spec.containers)) return [];
  const meta = isObject(doc.metadata) ? doc.metadata : {};
  return [
    {
      pointer: base + path.map((p) => `/${p}`).join(''),
      kind,
      name: typeof meta.name === 'string' ? meta.name : '<unnamed>',
      namespace: typeof meta.namespace === 'string' ? meta.namespace : undefined,
      template: node as PodTemplateRef['template'],
    },
  ];
}
