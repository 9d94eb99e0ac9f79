// linkerd-cni's own `linkerd` block against the mesh profile (src/cni/plugin-config.ts): the corpus's rendered
// linkerd-cni entry (linkerd2-proxy-init testdata) chained after the corpus's Calico, then variants of its block
// as a hand-edited or mis-installed node would have them, read with Go's decoding rules.
import { describe, expect, it } from 'vitest';
import { verifyWithPluginConfig, type RedirectExpectations } from '../../src/cni/plugin-config.ts';
import { PROFILE_DEFAULTS } from '../../src/config/defaults.ts';
import { corpus, memorySnapshot } from './helpers.ts';

const LINKERD: RedirectExpectations = {
  inboundPort: PROFILE_DEFAULTS.linkerd.proxy.inboundPort,
  outboundPort: PROFILE_DEFAULTS.linkerd.proxy.outboundPort,
  proxyUid: PROFILE_DEFAULTS.linkerd.proxy.uid,
};
const OPTIONS = { runtime: 'containerd' as const, libcni: '1.1' as const, pluginType: 'linkerd-cni', maxConfNum: 1 };

/** Calico's conflist from the corpus with linkerd-cni appended; `linkerdText` is the entry's raw JSON text. */
function conflist(linkerdText: string): string {
  const calico = corpus('linkerd__10-calico.conflist');
  const at = calico.lastIndexOf(']');
  return `${calico.slice(0, at).trimEnd()},\n${linkerdText}\n${calico.slice(at)}`;
}

/** The corpus's rendered linkerd-cni entry with its `linkerd` block replaced. */
function entry(block: string): string {
  const text = corpus('linkerd__cni-exp.json');
  return text.replace(/"linkerd": \{[\s\S]*?\n {2}\}/, `"linkerd": ${block}`);
}

function verdict(linkerdText: string, expect: RedirectExpectations | null = LINKERD) {
  return verifyWithPluginConfig(
    memorySnapshot({ '10-calico.conflist': conflist(linkerdText) }),
    OPTIONS,
    expect ?? undefined,
  );
}

describe('linkerd-cni plugin config vs the linkerd profile', () => {
  it('the corpus entry as installed matches Linkerd’s ports and UID: verified', () => {
    const v = verdict(corpus('linkerd__cni-exp.json'));
    expect(v.reason).toBe('verified');
    expect(v.evidence.plugins).toEqual(['calico', 'portmap', 'linkerd-cni']);
  });

  it.each([
    [
      'Istio’s ports (a chain installed for another mesh)',
      '{"incoming-proxy-port": 15006, "outgoing-proxy-port": 15001, "proxy-uid": 1337}',
      [
        "incoming-proxy-port is 15006, the proxy's inbound port is 4143",
        "outgoing-proxy-port is 15001, the proxy's outbound port is 4140",
        'proxy-uid is 1337, the proxy runs as 2102',
      ],
    ],
    [
      'another proxy UID',
      '{"incoming-proxy-port": 4143, "outgoing-proxy-port": 4140, "proxy-uid": 1000}',
      ['proxy-uid is 1000, the proxy runs as 2102'],
    ],
    [
      'simulate',
      '{"incoming-proxy-port": 4143, "outgoing-proxy-port": 4140, "proxy-uid": 2102, "simulate": true}',
      ['simulate is true: it installs no rules'],
    ],
    [
      'ports-to-redirect narrowing inbound',
      '{"incoming-proxy-port": 4143, "outgoing-proxy-port": 4140, "proxy-uid": 2102, "ports-to-redirect": [8080]}',
      ['ports-to-redirect 8080 narrows inbound redirection to those ports'],
    ],
    [
      'no ports at all (Go zero values)',
      '{}',
      [
        "incoming-proxy-port is 0, the proxy's inbound port is 4143",
        "outgoing-proxy-port is 0, the proxy's outbound port is 4140",
        'proxy-uid is 0, the proxy runs as 2102',
      ],
    ],
    [
      'a duplicate key: the last one counts',
      '{"outgoing-proxy-port": 4140, "incoming-proxy-port": 4143, "proxy-uid": 2102, "outgoing-proxy-port": 15001}',
      ["outgoing-proxy-port is 15001, the proxy's outbound port is 4140"],
    ],
    [
      'a key in other case: Go’s decoder matches it to the field',
      '{"Outgoing-Proxy-Port": 15001, "incoming-proxy-port": 4143, "proxy-uid": 2102}',
      ["outgoing-proxy-port is 15001, the proxy's outbound port is 4140"],
    ],
    [
      'a port written as a string: linkerd-cni cannot read it',
      '{"incoming-proxy-port": "4143", "outgoing-proxy-port": 4140, "proxy-uid": 2102}',
      [
        'linkerd-cni cannot read its configuration (linkerd.incoming-proxy-port cannot be read as Go type int) and fails every pod',
      ],
    ],
    [
      'a fractional port',
      '{"incoming-proxy-port": 4143.5, "outgoing-proxy-port": 4140, "proxy-uid": 2102}',
      [
        'linkerd-cni cannot read its configuration (linkerd.incoming-proxy-port cannot be read as Go type int) and fails every pod',
      ],
    ],
  ])('%s → plugin_config_mismatch', (_name, block, problems) => {
    const v = verdict(entry(block));
    expect(v.verified).toBe(false);
    expect(v.reason).toBe('plugin_config_mismatch');
    expect(v.detail).toBe(`linkerd-cni: ${problems.join('; ')}`);
    expect(v.message).toContain('file 10-calico.conflist');
  });

  it.each([
    [
      '4140.0 and 4.143e3 are whole numbers after the float64 round trip',
      '{"incoming-proxy-port": 4.143e3, "outgoing-proxy-port": 4140.0, "proxy-uid": 2102}',
    ],
    [
      'null leaves a field as an earlier key set it',
      '{"incoming-proxy-port": 4143, "outgoing-proxy-port": 4140, "proxy-uid": 2102, "simulate": null}',
    ],
    [
      'unknown keys are skipped',
      '{"incoming-proxy-port": 4143, "outgoing-proxy-port": 4140, "proxy-uid": 2102, "future-flag": {"x": [1]}}',
    ],
  ])('%s → verified', (_name, block) => {
    expect(verdict(entry(block)).reason).toBe('verified');
  });

  it('a second block under a case variant merges: its fields count unless the later one sets them', () => {
    // Sorted by bytes "LINKERD" comes before "linkerd": both are decoded into the same struct, in that order.
    const merged = entry('{"incoming-proxy-port": 4143, "outgoing-proxy-port": 4140}').replace(
      '"linkerd":',
      '"LINKERD": {"proxy-uid": 1337, "outgoing-proxy-port": 15001}, "linkerd":',
    );
    expect(verdict(merged).detail).toBe('linkerd-cni: proxy-uid is 1337, the proxy runs as 2102');
  });

  it('is not checked without a profile, for other plugins, or when the chain is not verified anyway', () => {
    const bad = entry('{"incoming-proxy-port": 15006, "outgoing-proxy-port": 15001, "proxy-uid": 1337}');
    expect(verdict(bad, null).reason).toBe('verified');
    const istio = verifyWithPluginConfig(
      memorySnapshot({ '10-calico.conflist': conflist(bad) }),
      { ...OPTIONS, pluginType: 'calico' },
      LINKERD,
    );
    expect(istio.reason).not.toBe('plugin_config_mismatch');
    const first = verifyWithPluginConfig(
      memorySnapshot({ '10-calico.conflist': corpus('linkerd__10-calico-linkerd.conflist') }),
      OPTIONS,
      LINKERD,
    );
    expect(first.reason).not.toBe('plugin_config_mismatch');
  });
});
