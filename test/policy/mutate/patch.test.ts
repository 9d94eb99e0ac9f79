import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import * as patch from '../../../src/policy/mutate/patch.ts';
import type { Pod } from '../../../src/contract/pod.ts';
import type { PatchOp } from '../../../src/contract/patch.ts';
import { pod } from './fixtures.ts';

function apply(p: Pod, ops: PatchOp[]): Pod {
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(ops) as jsonpatch.Operation[], true, false)
    .newDocument;
}

const expr = { key: 'meshgate.io/cni-verified', operator: 'In', values: ['true'] };

describe('requireNodeLabel', () => {
  it('ANDs the requirement into every existing (ORed) term', () => {
    const p = pod({
      affinity: {
        podAntiAffinity: {},
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
            ],
          },
        },
      },
    });
    const out = apply(p, patch.requireNodeLabel(p, expr.key, 'true'));
    const terms = out.spec.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms!;
    expect(terms[0].matchExpressions).toEqual([{ key: 'zone', operator: 'In', values: ['a'] }, expr]);
    expect(terms[1]).toEqual({
      matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }],
      matchExpressions: [expr],
    });
    expect(out.spec.affinity!.podAntiAffinity).toEqual({});
  });

  it.each([
    ['no affinity', {}],
    ['affinity without nodeAffinity', { affinity: { podAffinity: {} } }],
    [
      'nodeAffinity with only preferred terms',
      { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } } },
    ],
    [
      'empty term list',
      { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } } },
    ],
  ])('creates the term when there is %s', (_n, spec) => {
    const p = pod(spec as Partial<Pod['spec']>);
    const out = apply(p, patch.requireNodeLabel(p, expr.key, 'true'));
    expect(out.spec.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms).toEqual([
      { matchExpressions: [expr] },
    ]);
  });

  it('adds nothing when every term already requires it', () => {
    const p = pod({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [expr] }] },
        },
      },
    });
    expect(patch.requireNodeLabel(p, expr.key, 'true')).toEqual([]);
  });
});

describe('metadata and lists', () => {
  it('escapes keys with / and ~ (RFC 6901)', () => {
    const p = pod({}, { name: 'w', annotations: { other: 'x' } });
    const ops = patch.setMetadataEntries(p, { annotations: { 'a/b~c': 'v' } });
    expect(ops[0].path).toBe('/metadata/annotations/a~1b~0c');
    expect(apply(p, ops).metadata!.annotations).toEqual({ other: 'x', 'a/b~c': 'v' });
  });

  it('creates metadata, labels and annotations when absent', () => {
    const p = { spec: { containers: [{ name: 'a' }] } } as Pod;
    expect(apply(p, patch.setMetadataEntries(p, { labels: { k: 'v' } })).metadata).toEqual({ labels: { k: 'v' } });
    const both = patch.setMetadataEntries(p, { labels: { k: 'v' }, annotations: { a: 'b' } });
    expect(apply(p, both).metadata).toEqual({ labels: { k: 'v' }, annotations: { a: 'b' } });
    const named = { metadata: { name: 'n' }, spec: { containers: [{ name: 'a' }] } } as Pod;
    expect(
      apply(named, patch.setMetadataEntries(named, { labels: { k: 'v' }, annotations: { a: 'b' } })).metadata,
    ).toEqual({ name: 'n', labels: { k: 'v' }, annotations: { a: 'b' } });
  });

  it('leaves entries that already hold the value, replaces those that do not', () => {
    const p = pod({}, { name: 'w', labels: { k: 'v', x: 'old' } });
    const ops = patch.setMetadataEntries(p, { labels: { k: 'v', x: 'new' } });
    expect(ops).toEqual([{ op: 'add', path: '/metadata/labels/x', value: 'new' }]);
    expect(apply(p, ops).metadata!.labels).toEqual({ k: 'v', x: 'new' });
  });

  it('prepends init containers in order, to an empty or existing list', () => {
    const adds = [{ name: 'a' }, { name: 'b' }];
    for (const initContainers of [undefined, [], [{ name: 'user' }]]) {
      const p = pod(initContainers ? { initContainers } : {});
      const names = apply(p, patch.prependInitContainers(p, adds)).spec.initContainers!.map((c) => c.name);
      expect(names).toEqual(['a', 'b', ...(initContainers ?? []).map((c) => c.name)]);
    }
  });

  it('appends volumes to an absent or existing list', () => {
    for (const volumes of [undefined, [{ name: 'v0' }]]) {
      const p = pod(volumes ? { volumes } : {});
      expect(apply(p, patch.appendVolumes(p, [{ name: 'v1' }])).spec.volumes!.map((v) => v.name)).toEqual([
        ...(volumes ?? []).map((v) => v.name),
        'v1',
      ]);
    }
  });
});

describe('addImagePullSecrets', () => {
  it('adds the list when the pod has none, appends only the missing names otherwise, keeps the pod’s own', () => {
    const none = pod();
    expect(apply(none, patch.addImagePullSecrets(none, ['a', 'b'])).spec.imagePullSecrets).toEqual([
      { name: 'a' },
      { name: 'b' },
    ]);
    const some = pod({ imagePullSecrets: [{ name: 'own' }, { name: 'b' }, {}] });
    const ops = patch.addImagePullSecrets(some, ['a', 'b']);
    expect(ops).toEqual([{ op: 'add', path: '/spec/imagePullSecrets/-', value: { name: 'a' } }]);
    expect(apply(some, ops).spec.imagePullSecrets).toEqual([{ name: 'own' }, { name: 'b' }, {}, { name: 'a' }]);
    const empty = pod({ imagePullSecrets: [] });
    expect(apply(empty, patch.addImagePullSecrets(empty, ['a'])).spec.imagePullSecrets).toEqual([{ name: 'a' }]);
  });

  it('nothing to add: no op', () => {
    expect(patch.addImagePullSecrets(pod(), [])).toEqual([]);
    expect(patch.addImagePullSecrets(pod({ imagePullSecrets: [{ name: 'a' }] }), ['a'])).toEqual([]);
  });
});
