// The loader's value checks come from the declaration's constraint keywords (src/config/constraints.ts): one sentence
// per broken value, naming its key path, in the declaration's words where it gives them (errorMessage).
import { describe, expect, it } from 'vitest';
import { constraintProblems } from '../../src/config/constraints.ts';
import { buildConfig, ConfigError } from '../../src/config/load.ts';
import type { SchemaNode } from '../../src/contract/shape.ts';

const problems = (raw: Record<string, unknown>): string[] => {
  try {
    buildConfig(raw);
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
};

describe('constraintProblems on hand-written nodes', () => {
  const cases: Array<[string, SchemaNode, unknown, string[]]> = [
    ['a whole number', { type: 'integer', minimum: 1, maximum: 9 }, 2.5, ['x: 2.5 is not a whole number in 1-9']],
    ['below a range', { type: 'integer', minimum: 1, maximum: 9 }, 0, ['x: 0 is not in 1-9']],
    ['an exclusive bound', { type: 'number', exclusiveMinimum: 0, maximum: 300 }, 0, ['x: 0 is not in (0, 300]']],
    ['a lower bound only', { type: 'integer', minimum: 60 }, 59, ['x: 59 is not >= 60']],
    ['a pattern', { type: 'string', pattern: '^[a-z]+$' }, 'A', ['x: "A" does not match ^[a-z]+$']],
    [
      'a pattern said',
      { type: 'string', pattern: '^[a-z]+$', errorMessage: 'is not lower case' },
      'A',
      ['x: "A" is not lower case'],
    ],
    ['too long', { type: 'string', maxLength: 3 }, 'abcd', ['x: "abcd" is longer than 3 characters']],
    ['empty', { type: 'string', minLength: 1 }, '', ['x: must not be empty']],
    [
      'list size and items',
      { type: 'array', maxItems: 2, uniqueItems: true, items: { type: 'string', maxLength: 1 } },
      ['a', 'a', 'bc'],
      ['x: 3 items, at most 2', 'x[1]: "a" is listed twice', 'x[2]: "bc" is longer than 1 characters'],
    ],
    ['within every bound', { type: 'integer', minimum: 1, maximum: 9 }, 9, []],
  ];
  it.each(cases)('%s', (_name, node, value, expected) => {
    expect(constraintProblems(node, value, 'x')).toEqual(expected);
  });

  it('walks sections by their properties and leaves null and absent values alone', () => {
    const node: SchemaNode = {
      type: 'object',
      properties: { a: { type: 'integer', minimum: 1 }, b: { type: ['string', 'null'], pattern: '^x$' } },
    };
    expect(constraintProblems(node, { a: 0, b: null }, '')).toEqual(['a: 0 is not >= 1']);
    expect(constraintProblems(node, { b: 'y' }, 's')).toEqual(['s.b: "y" does not match ^x$']);
  });
});

describe('the declaration is what the loader checks', () => {
  it.each([
    [{ mesh: 'istio', proxy: { outboundPort: 70000 } }, 'proxy.outboundPort: 70000 is not a port (1-65535)'],
    [{ mesh: 'istio', validator: { uid: 0, gid: 1337 } }, 'validator.uid: 0 is not a non-root ID'],
    [{ mesh: 'istio', meshNamespace: 'Mesh_NS' }, 'meshNamespace: "Mesh_NS" is not a namespace name'],
    [
      { mesh: 'istio', validator: { imagePullSecrets: ['a', 'a'] } },
      'validator.imagePullSecrets[1]: "a" is listed twice',
    ],
    [{ mesh: 'istio', cni: { multusNetwork: 'istio-cni' } }, 'cni.multusNetwork: "istio-cni" is not namespace/name'],
    [{ mesh: 'custom', cni: { pluginType: 'x' }, proxy: { image: '' } }, 'proxy.image: is not set'],
    [{ mesh: 'istio', validator: { timeoutSeconds: 0 } }, 'validator.timeoutSeconds: 0 is not in (0, 300]'],
  ])('%j', (raw, message) => {
    expect(problems(raw).join('\n')).toContain(message);
  });

  it("every profile's defaults meet the declaration's constraints", () => {
    for (const mesh of ['istio', 'linkerd']) expect(problems({ mesh })).toEqual([]);
  });
});
