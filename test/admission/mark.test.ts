// The admission mark through the handlers: the mutating webhook marks what it admits as meshed through a
// namespace-scope route (one op after the decision's), the validating webhook refuses a CREATE whose mark does not
// hold, and the update guard keeps it fixed. Patches are applied with fast-json-patch, as the apiserver would.
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { mutate } from '../../src/admission/mutate.ts';
import type { AdmissionRequest, Verdict } from '../../src/admission/review.ts';
import { validate } from '../../src/admission/validate.ts';
import type { AdmissionScope, Marker } from '../../src/mark/admission.ts';
import { keyRing } from '../../src/mark/keys.ts';
import { ADMITTED_ANNOTATION, verifyMark } from '../../src/mark/mark.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { cfg, pod, verified } from '../policy/mutate/fixtures.ts';
import { ISO_T0, KEY_B, RING, T0, markFor, marker } from '../support/mark.ts';

const config = cfg();

function review(p: unknown, operation: 'CREATE' | 'UPDATE' = 'CREATE', oldObject?: unknown): AdmissionRequest {
  return {
    uid: 'u',
    operation,
    namespace: 'demo',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    object: p,
    oldObject,
  };
}

function applied(p: Pod, v: Verdict): Pod {
  if (v.kind !== 'patch') return p;
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(v.ops) as jsonpatch.Operation[], true, false)
    .newDocument;
}

/** The pod as the apiserver stores it: after the mutating webhook, with its creationTimestamp. */
function created(p: Pod, at = ISO_T0): Pod {
  return { ...p, metadata: { ...p.metadata, creationTimestamp: at } };
}

const deps = (m = marker()) => ({ config, nodes: verified, marker: m });
const onGood = pod({ nodeName: 'good' });

describe('the mutating webhook marks what it admits as meshed', () => {
  it('one op after the decision’s: the mark verifies for the pod’s namespace and creation', () => {
    const v = mutate(review(onGood), deps());
    expect(v).toMatchObject({ kind: 'patch', reason: 'node_verified' });
    const withoutMark = mutate(review(onGood), { config, nodes: verified });
    expect(v.kind === 'patch' && v.ops.slice(0, -1)).toEqual(withoutMark.kind === 'patch' && withoutMark.ops);
    expect(v.kind === 'patch' && v.ops.at(-1)).toEqual({
      op: 'add',
      path: '/metadata/annotations/meshgate.io~1admitted',
      value: markFor('demo'),
    });
    const out = applied(onGood, v);
    expect(verifyMark(RING, out.metadata!.annotations![ADMITTED_ANNOTATION], 'demo', T0 + 2)).toMatchObject({
      ok: true,
    });
  });

  it.each([
    ['no metadata at all', { apiVersion: 'v1', kind: 'Pod', spec: onGood.spec } as Pod],
    ['metadata without annotations', pod({ nodeName: 'good' }, { name: 'web' })],
    ['annotations of its own', pod({ nodeName: 'good' }, { name: 'web', annotations: { team: 'shop' } })],
  ])('%s: the patch applies and carries the mark', (_n, p) => {
    const out = applied(p, mutate(review(p), deps()));
    expect(out.metadata?.annotations?.[ADMITTED_ANNOTATION]).toBe(markFor('demo'));
    expect(out.metadata?.annotations?.['meshgate.io/status']).toBeDefined();
  });

  it('a pod that already holds what meshgate adds (`meshgate inject` output applied) is marked too', () => {
    const injected = applied(onGood, mutate(review(onGood), { config, nodes: verified }));
    expect(mutate(review(injected), { config, nodes: verified })).toEqual({
      kind: 'allow',
      reason: 'already_injected',
    });
    const v = mutate(review(injected), deps());
    expect(v).toEqual({
      kind: 'patch',
      reason: 'already_injected',
      ops: [{ op: 'add', path: '/metadata/annotations/meshgate.io~1admitted', value: markFor('demo') }],
      warnings: [],
    });
  });

  it('a reinvocation seconds later changes nothing: the mark it holds still verifies', () => {
    const once = applied(onGood, mutate(review(onGood), deps()));
    expect(mutate(review(once), deps(marker(RING, T0 + 5)))).toEqual({ kind: 'allow', reason: 'already_injected' });
  });

  it('a mark the author copied in is replaced by a fresh one', () => {
    const copied = pod({ nodeName: 'good' }, { name: 'web', annotations: { [ADMITTED_ANNOTATION]: markFor('shop') } });
    expect(applied(copied, mutate(review(copied), deps())).metadata?.annotations?.[ADMITTED_ANNOTATION]).toBe(
      markFor('demo'),
    );
  });

  const noKeyYet: Marker = { ring: () => undefined, now: () => T0 };
  it.each<[string, AdmissionScope, Marker | undefined]>([
    ['a selected-pods route (pod opt-in, match conditions)', 'selected-pods', marker()],
    ['no key configured', 'namespace', undefined],
    ['no key loaded yet', 'namespace', noKeyYet],
  ])('no mark through %s', (_n, scope, m) => {
    const v = mutate(review(onGood), { config, nodes: verified, marker: m }, scope);
    expect(v.kind).toBe('patch');
    expect(applied(onGood, v).metadata?.annotations).not.toHaveProperty([ADMITTED_ANNOTATION]);
    expect(applied(onGood, v).metadata?.annotations).toHaveProperty(['meshgate.io/status']);
  });

  it('pods meshgate skips or refuses get no mark', () => {
    const optedOut = pod({ nodeName: 'good' }, { name: 'web', labels: { 'meshgate.io/inject': 'false' } });
    expect(mutate(review(optedOut), deps())).toMatchObject({ kind: 'deny', reason: 'opt_out_refused' });
    const onBad = pod({ nodeName: 'bad' });
    expect(mutate(review(onBad), deps())).toMatchObject({ kind: 'deny' });
    const system = { ...review(onGood), namespace: 'kube-system' };
    expect(mutate(system, deps())).toEqual({ kind: 'allow', reason: 'system_namespace' });
  });
});

describe('the validating webhook refuses a CREATE whose mark does not hold', () => {
  const admitted = created(applied(onGood, mutate(review(onGood), deps())));
  const withMark = (mark: string) =>
    created({
      ...admitted,
      metadata: {
        ...admitted.metadata,
        annotations: { ...admitted.metadata!.annotations, [ADMITTED_ANNOTATION]: mark },
      },
    });

  it('allows the pod as the mutating webhook marked it', async () => {
    expect(await validate(review(admitted), deps())).toMatchObject({ kind: 'allow', reason: 'ok' });
  });

  it('allows a meshed pod without a mark (the mutating webhook was skipped): the repair controller ignores it', async () => {
    const bare = applied(onGood, mutate(review(onGood), { config, nodes: verified }));
    expect(await validate(review(created(bare)), deps())).toMatchObject({ kind: 'allow' });
  });

  it.each([
    ['a mark from another namespace', withMark(markFor('shop')), 'namespace', /does not verify for namespace demo/],
    [
      'a forged mark',
      withMark(markFor('demo', T0, keyRing(KEY_B))),
      'namespace',
      /names key .*, which meshgate does not hold/,
    ],
    ['a truncated mark', withMark(markFor('demo').slice(0, 20)), 'namespace', /is not a meshgate mark/],
    [
      'a mark issued long before the pod was created',
      withMark(markFor('demo', T0 - 3600)),
      'namespace',
      /a mark holds only for a pod created within 5 minutes of its admission/,
    ],
    [
      'any mark through a selected-pods route',
      admitted,
      'selected-pods',
      /meshgate marks only pods of namespaces whose every pod it reviews/,
    ],
  ] as const)('%s', async (_n, p, scope, message) => {
    const v = await validate(review(p), deps(), scope);
    expect(v).toMatchObject({ kind: 'deny', reason: 'admission_mark_invalid' });
    expect(v.kind === 'deny' && v.message).toMatch(message);
    expect(v.kind === 'deny' && v.message).toMatch(/only meshgate's mutating webhook may set it$/);
  });

  it('a mark on a pod meshgate does not mesh (opted out where that is allowed)', async () => {
    const open = cfg('custom', { injection: { allowPodOptOut: true } });
    const out = pod(
      {},
      {
        name: 'web',
        labels: { 'meshgate.io/inject': 'false' },
        annotations: { [ADMITTED_ANNOTATION]: markFor('demo') },
      },
    );
    const v = await validate(review(created(out)), { config: open, nodes: verified, marker: marker() });
    expect(v).toMatchObject({
      kind: 'deny',
      reason: 'admission_mark_invalid',
      message: expect.stringContaining('on a pod meshgate does not mesh'),
    });
  });

  it('not a mark this meshgate holds no key for: admitted (the repair controller verifies it before acting on it)', async () => {
    const v = await validate(review(admitted), { config, nodes: verified });
    expect(v.kind).toBe('allow');
    // The same pod with the key is judged (and a forged mark refused: above).
    expect((await validate(review(admitted), { config, nodes: verified, marker: marker() })).kind).toBe('allow');
  });
});

describe('the update guard keeps the mark fixed', () => {
  const admitted = created(applied(onGood, mutate(review(onGood), deps())));
  const unmeshed = created(pod({ nodeName: 'good' }));
  const annotate = (p: Pod, mark: string | undefined): Pod => {
    const annotations = { ...p.metadata?.annotations };
    if (mark === undefined) delete annotations[ADMITTED_ANNOTATION];
    else annotations[ADMITTED_ANNOTATION] = mark;
    return { ...p, metadata: { ...p.metadata, annotations } };
  };

  it.each([
    ['removed', admitted, annotate(admitted, undefined)],
    ['replaced', admitted, annotate(admitted, markFor('demo', T0 + 1))],
    ['added to a pod never admitted as meshed', unmeshed, annotate(unmeshed, markFor('demo'))],
  ])('%s: refused', async (_n, old, now) => {
    const v = await validate(review(now, 'UPDATE', old), deps());
    expect(v).toMatchObject({
      kind: 'deny',
      reason: 'mesh_metadata_changed',
      message: expect.stringContaining(`the update changes annotation ${ADMITTED_ANNOTATION}`),
    });
  });

  it('other annotations may change', async () => {
    const now = {
      ...admitted,
      metadata: { ...admitted.metadata, annotations: { ...admitted.metadata!.annotations, team: 'x' } },
    };
    expect(await validate(review(now, 'UPDATE', admitted), deps())).toMatchObject({ kind: 'allow' });
  });
});
