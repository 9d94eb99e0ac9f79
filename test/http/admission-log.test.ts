/**
 * The admission log line (issue 24), read back as a log pipeline reads it: one JSON line per review with a string
 * level, an ISO time, and the pod (name, or generateName with `*`), its owner, namespace, node, route, resource,
 * decision, reason code, uid and dryRun — every key on every line. Reviews through the real app and handlers.
 */
import { admissionLogFields } from '../../src/server/admission-log.ts';
import { describe, expect, it } from 'vitest';
import {
  bindingReview,
  buildTestApp,
  loadCorpus,
  podReview,
  post,
  type Review,
  type ReviewResponse,
} from './helpers.ts';
import { ISO_TIME, memoryLogger } from '../log/logs.ts';

const KEYS = [
  'decision',
  'dryRun',
  'hostname',
  'level',
  'msg',
  'namespace',
  'node',
  'operation',
  'owner',
  'pid',
  'pod',
  'reason',
  'reqId',
  'resource',
  'route',
  'time',
  'uid',
  'wouldDeny',
].sort();

async function logged(route: string, review: Review) {
  const { logger, lines } = memoryLogger();
  const { app } = buildTestApp({ logger });
  const res = await post(app, route, review);
  expect(res.statusCode).toBe(200);
  const answer = res.json() as ReviewResponse;
  const admission = lines.filter((l) => l.msg === 'admission');
  expect(admission).toHaveLength(1);
  const line = admission[0];
  expect(Object.keys(line).sort()).toEqual(KEYS);
  expect(line.level).toBe('info');
  expect(line.time).toMatch(ISO_TIME);
  // The line says what the answer said.
  expect(line.decision === 'allow' || line.decision === 'patch').toBe(answer.response.allowed);
  expect(line.reason).toBe(answer.response.auditAnnotations?.['meshgate.io/reason']);
  return line;
}

/** Pepr's captured pod CREATE: a ReplicaSet's pod (generateName, a controller ownerReference) on a node. */
const replicaSetPod = loadCorpus().find((c) => c.name === 'pepr__admission-create-pod.json')!.review;

describe('the admission log line', () => {
  it('a pod CREATE: the pod, its controlling owner, namespace and node, the decision and its reason', async () => {
    const line = await logged('/mutate', replicaSetPod);
    expect(line).toMatchObject({
      uid: replicaSetPod.request.uid,
      route: 'mutate',
      operation: 'CREATE',
      resource: 'pods',
      namespace: 'default',
      pod: 'cool-name-podinfo-66bbff7cf4-fwhl2',
      owner: 'ReplicaSet/cool-name-podinfo-66bbff7cf4',
      node: 'k3d-k3s-default-server-0',
      wouldDeny: null,
      dryRun: false,
    });
  });

  it('a pod not yet named: generateName with *', async () => {
    const review = structuredClone(replicaSetPod);
    const object = review.request.object as { metadata: Record<string, unknown> };
    delete object.metadata.name;
    review.request.name = '';
    expect(await logged('/mutate', review)).toMatchObject({ pod: 'cool-name-podinfo-66bbff7cf4-*' });
  });

  it('a binding: the pod and the target node; a denial names its reason code', async () => {
    const line = await logged('/validate', bindingReview('uid-b', 'web-1', 'n2'));
    expect(line).toMatchObject({
      uid: 'uid-b',
      route: 'validate',
      resource: 'pods/binding',
      pod: 'web-1',
      owner: null,
      node: 'n2',
      decision: 'deny',
      reason: 'binding_node_unverified',
    });
  });

  it('a dry run, a bare pod and no node: dryRun true, owner and node null', async () => {
    const review = podReview('uid-d');
    review.request.dryRun = true;
    expect(await logged('/validate', review)).toMatchObject({
      uid: 'uid-d',
      pod: 'web',
      namespace: 'demo',
      owner: null,
      node: null,
      wouldDeny: null,
      dryRun: true,
    });
  });

  it('a name longer than Kubernetes allows is cut at 253 characters', async () => {
    const review = podReview('uid-l');
    (review.request.object as { metadata: { name: string } }).metadata.name = 'x'.repeat(10_000);
    expect(await logged('/mutate', review)).toMatchObject({ pod: `${'x'.repeat(253)}…` });
  });

  it('a handler failure is logged with its error as an object, and the review as errored', async () => {
    const { logger, lines } = memoryLogger();
    const { app } = buildTestApp({ logger });
    await post(app, '/boom', podReview('uid-x'));
    const failed = lines.find((l) => l.msg === 'handler failed');
    expect(failed).toMatchObject({ level: 'error', uid: 'uid-x', err: { type: 'Error', message: expect.any(String) } });
    expect(lines.find((l) => l.msg === 'admission')).toMatchObject({ decision: 'error', reason: 'internal_error' });
  });
});

describe('a refusal admitted below enforce (src/admission/level.ts)', () => {
  it('is logged as its level, with what it would have said', () => {
    const r = {
      uid: 'u',
      operation: 'CREATE' as const,
      namespace: 'shop',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      object: { metadata: { name: 'p' }, spec: {} },
    };
    const fields = admissionLogFields('mutate/audit', r, {
      kind: 'patch',
      reason: 'node_unverified',
      ops: [],
      audited: { level: 'audit', message: 'node bad has no verified CNI chain' },
    });
    expect(fields).toMatchObject({
      decision: 'audit',
      reason: 'node_unverified',
      wouldDeny: 'node bad has no verified CNI chain',
    });
  });
});
