/**
 * The objects `bench --scale` creates, shaped like a real cluster's:
 * - Nodes: a kubelet's (bench/nodes.ts: labels, annotations, taints, capacity, five conditions, addresses, nodeInfo,
 *   12–27 cached images; 5–10 KiB of JSON), with the node agent's verdict heartbeat fresh, and a Lease per node as
 *   the agent renews it (src/agent/node-lease.ts);
 * - guarded pods (in namespaces labelled istio-injection=enabled): Istio's own injection of its `hello` example
 *   (../shared/corpus, istio__hello.yaml.injected: istio-validation, istio-proxy as a native sidecar) adjusted by
 *   meshgate's own mutating decision (the istio profile: label meshgate.io/redirect, meshgate.io/status), each owned
 *   by a ReplicaSet, bound to a node — except one in PENDING_EVERY, left unscheduled (what the binding guard's cache
 *   holds);
 * - other pods: the same app without a mesh, in namespaces nobody opted in.
 * The apiserver adds its defaults (service-account volume, terminationMessagePath, …) on create. Statuses stay
 * Pending: no kubelet reports them (a status update per pod would double the writes).
 */
import { readFileSync } from 'node:fs';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { parseAllDocuments } from 'yaml';
import { mutate } from '../../src/admission/mutate.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import { podTemplates } from '../../src/manifests/workloads.ts';
import { NODE_LEASE_LABEL, nodeLeaseName } from '../../src/contract/node.ts';
import { testConfig } from '../../test/support/config.ts';
import { keyRing } from '../../src/mark/keys.ts';
import { ADMITTED_ANNOTATION, issueMark } from '../../src/mark/mark.ts';
import { CORPUS_DIR, podReview } from '../corpus.ts';
import { kubeletNode } from '../nodes.ts';

type Obj = Record<string, unknown>;

/** One guarded pod in this many is left unscheduled: a busy cluster's pods waiting for a node. */
export const PENDING_EVERY = 200;
/** Namespaces pods are spread over; the first GUARDED_NAMESPACES of them are opted in (60 % of pods guarded). */
export const NAMESPACES = 300;
export const GUARDED_NAMESPACES = 180;
/** The admission mark's key the bench's daemons mount: guarded pods carry marks it signs, as the webhook gives them. */
export const MARK_KEY = Buffer.alloc(32, 7);
const ring = keyRing(MARK_KEY);
const marks = new Map<string, string>();
/** The mark of a pod admitted in `ns` now (one per namespace and second, as the webhook would issue it). */
function markNow(ns: string): string {
  const now = Math.floor(Date.now() / 1000);
  const key = `${ns}/${now}`;
  let m = marks.get(key);
  if (m === undefined) {
    if (marks.size > 10_000) marks.clear();
    m = issueMark(ring, ns, now);
    marks.set(key, m);
  }
  return m;
}

/** Opts a namespace in (the webhook configuration's namespaceSelector) as Istio's label does. */
export const OPT_IN = { 'istio-injection': 'enabled' };

export const namespaceOf = (i: number) => `team-${i % NAMESPACES}`;
export const isGuarded = (i: number) => i % NAMESPACES < GUARDED_NAMESPACES;
export const nodeName = (i: number) => kubeletNode.nameOf(i);

/** The injected pod template, computed once: Istio's injection, then meshgate's own patch. */
let injected: Obj | undefined;
function guardedTemplate(): Obj {
  if (injected) return injected;
  const text = readFileSync(`${CORPUS_DIR}manifests/istio__hello.yaml.injected`, 'utf8');
  const t = podTemplates(parseAllDocuments(text)[0].toJS() as Obj)[0];
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { ...t.template.metadata }, spec: t.template.spec };
  const nodes = nodeFactsFromState({ nodes: { n: { verified: true, kubeletVersion: 'v1.34.1' } } }, 'bench');
  const v = mutate(podReview('scale', pod, 'team-0').request as never, { config: testConfig('istio'), nodes });
  if (v.kind !== 'patch') throw new Error(`meshgate did not patch the bench's pod: ${v.kind} ${v.reason}`);
  injected = jsonpatch.applyPatch(structuredClone(pod), structuredClone(v.ops) as Operation[], true, false)
    .newDocument as Obj;
  return injected;
}

/** Pod `i` of the cluster: guarded or not by its namespace, bound to one of `nodes` nodes unless left pending. */
export function scalePod(i: number, nodes: number): Obj {
  const ns = namespaceOf(i);
  const rs = `app-${Math.floor(i / NAMESPACES / 50)}-7d9c8b5f4`;
  const owner = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    name: rs,
    uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    controller: true,
    blockOwnerDeletion: true,
  };
  const pending = isGuarded(i) && i % PENDING_EVERY === 0;
  const node = pending || nodes === 0 ? {} : { nodeName: nodeName(i % nodes) };
  if (!isGuarded(i)) {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `app-${i}`,
        namespace: ns,
        labels: { app: 'hello', 'pod-template-hash': '7d9c8b5f4' },
        ownerReferences: [owner],
      },
      spec: {
        ...node,
        containers: [
          {
            name: 'hello',
            image: 'docker.io/istio/examples-helloworld-v1',
            ports: [{ containerPort: 80 }],
            resources: { requests: { cpu: '100m' } },
          },
        ],
      },
    };
  }
  const t = guardedTemplate();
  const meta = t.metadata as Obj;
  return {
    ...t,
    metadata: {
      ...meta,
      name: `app-${i}`,
      namespace: ns,
      annotations: { ...(meta.annotations as Record<string, string>), [ADMITTED_ANNOTATION]: markNow(ns) },
      ownerReferences: [owner],
    },
    spec: { ...(t.spec as Obj), ...node },
  };
}

/** Node `i`, its verdict heartbeat at `now` (the agent published it just now). */
export function scaleNode(i: number, now: string): Obj {
  const n = kubeletNode(i) as Obj & { metadata: Obj; status: { conditions: Array<Obj> } };
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, managedFields: _m, ...metadata } = n.metadata;
  const conditions = n.status.conditions.map((c) => ({ ...c, lastHeartbeatTime: now, lastTransitionTime: now }));
  return { ...n, metadata, status: { ...n.status, conditions } };
}

/** The Lease node `i`'s agent renews in `namespace` (src/agent/node-lease.ts), renewed at `now` (MicroTime). */
export function scaleLease(i: number, namespace: string, now: Date): Obj {
  const node = nodeName(i);
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: nodeLeaseName(node), namespace, labels: { [NODE_LEASE_LABEL]: 'true' } },
    spec: { holderIdentity: node, leaseDurationSeconds: 1200, renewTime: now.toISOString().replace('Z', '000Z') },
  };
}
