/**
 * Class 12, one parse of a pod: the webhook and the CLI share one parser and refuse the same shapes with the same
 * message (only where the pod came from differs), never with an exception.
 */
import { describe, expect, it } from 'vitest';
import { compileShape, parsePod } from '../../src/pod/parse.ts';
import {
  integer,
  list,
  mapping,
  nonEmptyString,
  number,
  optional,
  section,
  string,
  stringMap,
} from '../../src/contract/shape.ts';
import { injectCommand } from '../../src/cli/inject.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { mutate } from '../../src/admission/mutate.ts';
import type { AdmissionRequest } from '../../src/admission/review.ts';
import { cfg, verified } from '../policy/mutate/fixtures.ts';
import { stringify } from 'yaml';

const shapes: Array<[string, Record<string, unknown>, string]> = [
  ['a null container', { containers: [null] }, 'spec.containers[0]: expected a container (a mapping), got null'],
  [
    'a container without a name',
    { containers: [{ image: 'x' }] },
    'spec.containers[0].name: expected a non-empty string, got undefined',
  ],
  [
    'a string UID',
    { containers: [{ name: 'a', securityContext: { runAsUser: '1337' } }] },
    'spec.containers[0].securityContext.runAsUser: expected an integer, got "1337"',
  ],
  [
    'capabilities that are not a list',
    { containers: [{ name: 'a', securityContext: { capabilities: { add: 'NET_ADMIN' } } }] },
    'spec.containers[0].securityContext.capabilities.add: expected a list, got "NET_ADMIN"',
  ],
  [
    'an env var without a name',
    { containers: [{ name: 'a', env: [{ value: 'x' }] }] },
    'spec.containers[0].env[0].name: expected a string, got undefined',
  ],
  [
    'ephemeral containers that are not a list',
    { containers: [{ name: 'a' }], ephemeralContainers: {} },
    'spec.ephemeralContainers: expected a list, got a mapping',
  ],
  [
    'a pod-level GID that is not a number',
    { containers: [{ name: 'a' }], securityContext: { runAsGroup: true } },
    'spec.securityContext.runAsGroup: expected an integer, got true',
  ],
  [
    'null node-selector terms',
    {
      containers: [{ name: 'a' }],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [null] } } },
    },
    'nodeSelectorTerms[0]: expected a mapping, got null',
  ],
];

describe('one pod parser, one error, for the webhook and the CLI', () => {
  it.each(shapes)('%s', async (_n, spec, message) => {
    const parsed = parsePod({ metadata: { name: 'p' }, spec });
    expect(parsed).toEqual({ ok: false, error: expect.stringContaining(message) });

    const request = {
      uid: 'u',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'demo',
      operation: 'CREATE',
      object: { metadata: { name: 'p' }, spec },
    } as AdmissionRequest;
    const verdict = mutate(request, { config: cfg('istio'), nodes: verified });
    expect(verdict).toMatchObject({
      kind: 'deny',
      reason: 'invalid_object',
      message: expect.stringContaining(`request.object.${message.startsWith('spec') ? message : ''}`),
    });
    expect((verdict as { message: string }).message).toContain(message);

    const io = memoryIO(stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec }));
    const code = await injectCommand(['--mesh', 'istio', '-f', '-'], io);
    expect(code).toBe(1);
    expect(io.out).toBe('');
    expect(io.err).toContain('<stdin>: document 1 (Pod p): not a valid pod template: Pod p.');
    expect(io.err).toContain(message);
    expect(io.err).not.toMatch(/\n\s+at /); // no stack trace
  });
});

// The pod's declaration is in the shape language the configuration uses too (src/contract/shape.ts), whose nodes can
// say more than the pod parser checks: such a declaration is refused when it is compiled, never half checked.
describe('the pod parser checks every keyword of a declaration, or refuses it', () => {
  it('checks the keywords it knows, naming the path', () => {
    const check = compileShape(
      mapping({ a: list(integer()), b: optional(nonEmptyString()), m: optional(stringMap()) }),
    );
    expect(check({ a: [1, 2] }, 'v')).toBeUndefined();
    expect(check({ a: [1, 'x'] }, 'v')).toBe('v.a[1]: expected an integer, got "x"');
    expect(check({ a: [], b: '' }, 'v')).toBe('v.b: expected a non-empty string, got ""');
    expect(check({ a: [], m: { k: 1 } }, 'v')).toBe('v.m["k"]: expected a string, got 1');
  });

  it.each([
    ['a pattern', string({ pattern: '^a' }), /does not check pattern/],
    ['a range', integer({ minimum: 1 }), /does not check minimum/],
    ['a closed section', section({ a: string() }), /does not check additionalProperties/],
    ['a length other than non-empty', string({ minLength: 2 }), /does not check minLength/],
    ['an enum', { type: 'string', enum: ['a'] }, /does not check enum/],
    ['a kind it has no check for', number(), /does not check type/],
  ])('refuses %s', (_n, node, message) => {
    expect(() => compileShape(node)).toThrow(message);
  });
});
