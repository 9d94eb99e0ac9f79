// Istio's ambient settings learned from istio-cni-config (src/policy/ambient/learn.ts, src/kube/learned-images.ts), as the
// REAL istio-cni chart of Istio 1.27.0 renders it: its defaults are meshgate's, a custom selector is read as
// istio-cni reads it, and what istio-cni would not take is not learned.
import { describe, expect, it } from 'vitest';
import { ambientFromCniConfig } from '../../../src/policy/ambient/learn.ts';
import { PROFILE_DEFAULTS } from '../../../src/config/defaults.ts';
import { compileConfig } from '../../../src/config/compile.ts';
import { buildConfig } from '../../../src/config/load.ts';
import { withLearned } from '../../../src/config/learned.ts';
import { agreedAmbient, ambientFromConfigMap } from '../../../src/kube/learned-images.ts';
import { istioCniConfigData } from '../../istio/cni-chart.ts';

const cm = (data: Record<string, string>, name = 'istio-cni-config') => ({
  metadata: { name, namespace: 'istio-system' },
  data,
});
const CUSTOM = [{ namespaceSelector: { matchLabels: { 'mesh.example/ambient': 'on' } } }];

describe("istio-cni-config as Istio's chart renders it", () => {
  it("with the chart's defaults: meshgate's own default selectors and DNS capture", async () => {
    const data = await istioCniConfigData({ ambient: { enabled: true } });
    expect(ambientFromConfigMap(cm(data))).toEqual({
      enablementSelectors: PROFILE_DEFAULTS.istio.ambient.enablementSelectors,
      dnsCapture: PROFILE_DEFAULTS.istio.ambient.dnsCapture,
    });
  });

  it('with custom selectors and DNS capture off: those', async () => {
    const data = await istioCniConfigData({
      ambient: { enabled: true, enablementSelectors: CUSTOM, dnsCapture: false },
    });
    expect(ambientFromConfigMap(cm(data))).toEqual({ enablementSelectors: CUSTOM, dnsCapture: false });
  });
});

describe('what is not learned', () => {
  it.each([
    ['no selector key', undefined, undefined, /no key AMBIENT_ENABLEMENT_SELECTOR/],
    ['a mapping, not a list', { podSelector: {} }, undefined, /not a list/],
    [
      'an operator istio-cni would refuse',
      [{ podSelector: { matchExpressions: [{ key: 'k', operator: 'Near' }] } }],
      undefined,
      /AMBIENT_ENABLEMENT_SELECTOR\[0\]\.podSelector\.matchExpressions\[0\]\.operator: "Near"/,
    ],
    ['an unknown key', [{ podSelectr: {} }], undefined, /AMBIENT_ENABLEMENT_SELECTOR\[0\]\.podSelectr: unknown key/],
    ['DNS capture neither true nor false', CUSTOM, 'yes', /AMBIENT_DNS_CAPTURE: "yes"/],
    ['too many selectors', Array.from({ length: 17 }, () => CUSTOM[0]), undefined, /17 selectors, at most 16/],
  ])('%s', (_n, selectors, dns, problem) => {
    expect(ambientFromCniConfig(selectors, dns)).toEqual({ problem: expect.stringMatching(problem) });
  });

  it('YAML that does not parse, another ConfigMap, and two istio-cni-configs that disagree', () => {
    expect(ambientFromConfigMap(cm({ AMBIENT_ENABLEMENT_SELECTOR: '- [' }))).toEqual({
      problem: expect.stringMatching(/^AMBIENT_ENABLEMENT_SELECTOR: /),
    });
    expect(ambientFromConfigMap(cm({ AMBIENT_ENABLEMENT_SELECTOR: '[]' }, 'istio-cni-config-x'))).toBeUndefined();
    const a = { enablementSelectors: CUSTOM, dnsCapture: true };
    expect(agreedAmbient([a, structuredClone(a)])).toEqual(a);
    expect(agreedAmbient([a, { ...a, dnsCapture: false }])).toBeUndefined();
    expect(agreedAmbient([])).toBeUndefined();
  });
});

describe('the configuration with what istio-cni says', () => {
  const on = compileConfig(buildConfig({ mesh: 'istio', ambient: { enabled: true } }));
  const off = compileConfig(buildConfig({ mesh: 'istio' }));
  const learned = {
    images: { proxy: [], init: [], validator: [] },
    ambient: { enablementSelectors: CUSTOM, dnsCapture: false },
  };

  it('replaces the configured selectors and DNS capture with ambient on, and only then', () => {
    expect(withLearned(on, learned).config.ambient).toMatchObject({
      enabled: true,
      enablementSelectors: CUSTOM,
      dnsCapture: false,
    });
    expect(withLearned(off, learned)).toBe(off);
    expect(withLearned(on, { images: learned.images })).toBe(on);
  });
});
