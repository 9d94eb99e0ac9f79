import { describe, expect, it } from 'vitest';
import { validate } from '../../src/admission/validate.ts';
import type { AdmissionRequest } from '../../src/admission/review.ts';
import { cfg, facts } from '../policy/mutate/fixtures.ts';
import type { RedirectNeed } from '../../src/policy/validate/binding.ts';

const nodes = facts({ good: { verified: true }, bad: { verified: false, reason: 'binary_missing' } });

function binding(pod: string, node: string): AdmissionRequest {
  return {
    uid: 'u',
    operation: 'CREATE',
    namespace: 'demo',
    name: pod,
    subResource: 'binding',
    kind: { group: '', version: 'v1', kind: 'Binding' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    object: {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: pod, namespace: 'demo' },
      target: { apiVersion: 'v1', kind: 'Node', name: node },
    },
  };
}

/** A hand-written PodNeeds fake: a map for the cache, another for what a GET would return. */
function modes(cached: Record<string, RedirectNeed>, server: Record<string, RedirectNeed>, fail = false) {
  const gets: string[] = [];
  return {
    gets,
    get: (ns: string, n: string) => cached[`${ns}/${n}`],
    fetch: async (ns: string, n: string) => {
      gets.push(`${ns}/${n}`);
      if (fail) throw new Error('apiserver unavailable');
      return server[`${ns}/${n}`] ?? 'unmeshed';
    },
  };
}

describe('pods/binding guard', () => {
  it('denies a cached CNI-mode pod bound to an unverified node, naming node and reason', async () => {
    const v = await validate(binding('web', 'bad'), {
      config: cfg(),
      nodes,
      podNeeds: modes({ 'demo/web': 'cni' }, {}),
    });
    expect(v).toMatchObject({ kind: 'deny', reason: 'binding_node_unverified' });
    expect(v.kind === 'deny' && v.message).toMatch(/node bad.*binary_missing/);
  });

  it('allows the same pod onto a verified node without any GET', async () => {
    const m = modes({ 'demo/web': 'cni' }, {});
    expect(await validate(binding('web', 'good'), { config: cfg(), nodes, podNeeds: m })).toMatchObject({
      kind: 'allow',
    });
    expect(m.gets).toEqual([]);
  });

  it('falls back to exactly one GET on a cache miss, and counts it', async () => {
    const m = modes({}, { 'demo/new': 'cni' });
    const seen: string[] = [];
    const v = await validate(binding('new', 'bad'), {
      config: cfg(),
      nodes,
      podNeeds: m,
      onLookup: (s) => seen.push(s),
    });
    expect(v.kind).toBe('deny');
    expect(m.gets).toEqual(['demo/new']);
    expect(seen).toEqual(['get']);
  });

  it('allows init-mode pods anywhere; refuses unmeshed pods (in an opted-in namespace) everywhere', async () => {
    const m = modes({ 'demo/a': 'init' }, { 'demo/b': 'unmeshed' });
    expect((await validate(binding('a', 'bad'), { config: cfg(), nodes, podNeeds: m })).kind).toBe('allow');
    expect(await validate(binding('b', 'good'), { config: cfg(), nodes, podNeeds: m })).toMatchObject({
      kind: 'deny',
      reason: 'binding_unmeshed',
    });
  });

  it('without a pod cache (no cluster) a pod is judged as needing a verified node', async () => {
    expect(await validate(binding('c', 'bad'), { config: cfg(), nodes })).toMatchObject({
      kind: 'deny',
      reason: 'binding_node_unverified',
    });
    expect((await validate(binding('c', 'good'), { config: cfg(), nodes })).kind).toBe('allow');
  });

  it('propagates a failed GET as an error (the apiserver then applies failurePolicy)', async () => {
    await expect(
      validate(binding('x', 'bad'), { config: cfg(), nodes, podNeeds: modes({}, {}, true) }),
    ).rejects.toThrow(/unavailable/);
  });

  it('denies a Binding without a target', async () => {
    const r = binding('web', 'bad');
    (r.object as { target?: unknown }).target = undefined;
    expect(await validate(r, { config: cfg(), nodes })).toMatchObject({ kind: 'deny', reason: 'invalid_object' });
  });
});
