/** The `ambient` section's checks (src/config/ambient.ts): each refusal names its path. */
import { describe, expect, it } from 'vitest';
import { buildConfig, ConfigError } from '../../src/config/load.ts';

function problems(raw: Record<string, unknown>): string[] {
  try {
    buildConfig(raw);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('config ambient', () => {
  it("defaults to off with Istio 1.27's enablement selectors", () => {
    const c = buildConfig({ mesh: 'istio' });
    expect(c.ambient).toEqual({
      enabled: false,
      enablementSelectors: [
        { podSelector: { matchLabels: { 'istio.io/dataplane-mode': 'ambient' } } },
        {
          podSelector: { matchExpressions: [{ key: 'istio.io/dataplane-mode', operator: 'NotIn', values: ['none'] }] },
          namespaceSelector: { matchLabels: { 'istio.io/dataplane-mode': 'ambient' } },
        },
      ],
      dnsCapture: true,
      timeoutSeconds: 10,
      cniServiceAccount: 'istio-system/istio-cni',
    });
  });

  it.each([
    [
      { mesh: 'linkerd', ambient: { enabled: true } },
      /^ambient\.enabled: only mesh istio has an ambient mode, not linkerd$/,
    ],
    [{ mesh: 'istio', ambient: { timeoutSeconds: 0 } }, /^ambient\.timeoutSeconds: 0 is not/],
    [
      { mesh: 'istio', ambient: { cniServiceAccount: 'istio-cni' } },
      /^ambient\.cniServiceAccount: "istio-cni" is not namespace\/name of a ServiceAccount/,
    ],
    [
      { mesh: 'istio', ambient: { enablementSelectors: [{ podSelektor: {} }] } },
      /^ambient\.enablementSelectors\[0\]\.podSelektor: unknown key/,
    ],
    [
      {
        mesh: 'istio',
        ambient: { enablementSelectors: [{ podSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }] },
      },
      /^ambient\.enablementSelectors\[0\]\.podSelector\.matchExpressions\[0\]\.values: In needs at least one value$/,
    ],
    [
      {
        mesh: 'istio',
        ambient: {
          enablementSelectors: [
            { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] } },
          ],
        },
      },
      /^ambient\.enablementSelectors\[0\]\.namespaceSelector\.matchExpressions\[0\]\.operator: "Gt" is not one of/,
    ],
    [
      { mesh: 'istio', ambient: { enablementSelectors: [{ podSelector: { matchLabels: { a: 1 } } }] } },
      /matchLabels: expected a mapping of label to string value/,
    ],
    [
      { mesh: 'istio', ambient: { enablementSelectors: ['x'] } },
      /^ambient\.enablementSelectors\[0\]: expected a mapping/,
    ],
  ])('refuses %j', (raw, want) => {
    const got = problems(raw);
    expect(
      got.some((p) => want.test(p)),
      got.join('\n'),
    ).toBe(true);
  });

  it('accepts an empty selector list (nothing is ambient) and custom selectors', () => {
    expect(problems({ mesh: 'istio', ambient: { enabled: true, enablementSelectors: [] } })).toEqual([]);
    expect(
      problems({
        mesh: 'istio',
        ambient: { enabled: true, enablementSelectors: [{ namespaceSelector: { matchLabels: { team: 'a' } } }] },
      }),
    ).toEqual([]);
  });
});
