// The `reason` label of the repair controller's counters comes from a termination message read from a pod: only
// meshgate's validator's codes (and the meshes' validators by name) become series; anything else is `unknown`.
import { describe, expect, it } from 'vitest';
import { failureReason } from '../../src/repair/failed/decide.ts';

const meshgate = { exitCode: 42, source: 'meshgate' } as const;

describe('failureReason', () => {
  it("keeps meshgate's validator's codes and its detail", () => {
    expect(failureReason(meshgate, JSON.stringify({ reason: 'ambient_not_captured', detail: 'd' }))).toEqual({
      reason: 'ambient_not_captured',
      detail: 'd',
    });
  });

  it.each([
    ['a code the validator does not have', JSON.stringify({ reason: 'x'.repeat(5000), detail: 'd' })],
    ['a code of another kind', JSON.stringify({ reason: 42, detail: 'd' })],
    ['no code', JSON.stringify({ detail: 'd' })],
  ])('counts %s as unknown', (_name, message) => {
    expect(failureReason(meshgate, message).reason).toBe('unknown');
  });

  it('bounds the detail, and names the mesh of a mesh validator', () => {
    expect(
      failureReason(meshgate, JSON.stringify({ reason: 'timeout', detail: 'y'.repeat(5000) })).detail,
    ).toHaveLength(1000);
    expect(failureReason({ exitCode: 126, source: 'istio' }, 'iptables missing\nmore')).toEqual({
      reason: 'istio_validation_failed',
      detail: 'iptables missing',
    });
    expect(failureReason(meshgate, 'not json').reason).toBe('unknown');
  });
});
