/** Option combinations refused before anything is bound or sent: each forbidden shape and the allowed ones. */
import { describe, expect, it } from 'vitest';
import { isLoopback, optionsProblem } from '../../src/validator/checks.ts';
import type { ValidateOptions } from '../../src/validator/options.ts';

const istio: ValidateOptions = {
  outboundPort: 15001,
  inboundPort: 15006,
  probe: { host: '127.0.0.6', port: 15002, family: 4 },
  scope: 'pod',
  sourceAddress: '127.0.0.1',
  listenAddress: '127.0.0.1',
  timeoutMs: 5000,
};
const istio6: ValidateOptions = {
  ...istio,
  probe: { host: '::6', port: 15002, family: 6 },
  sourceAddress: '::1',
  listenAddress: '::1',
};
const linkerd: ValidateOptions = {
  ...istio,
  outboundPort: 4140,
  inboundPort: null,
  probe: { host: '192.0.2.1', port: 80, family: 4 },
  scope: 'external',
  sourceAddress: null,
};

describe('optionsProblem', () => {
  it.each<[string, ValidateOptions]>([
    ['Istio defaults', istio],
    ['Istio IPv6', istio6],
    ['Linkerd external probe', linkerd],
    ['Linkerd with an explicit pod source', { ...linkerd, sourceAddress: '10.244.1.5' }],
    ['a dual-stack listen address', { ...istio6, listenAddress: '::' }],
    ['no inbound listener', { ...istio, inboundPort: null }],
  ])('allows %s', (_, opts) => expect(optionsProblem(opts)).toBeUndefined());

  it.each<[string, ValidateOptions, RegExp]>([
    ['inbound = outbound', { ...istio, inboundPort: 15001 }, /--inbound-port 15001 equals --outbound-port/],
    [
      'probe port = outbound port',
      { ...istio, probe: { ...istio.probe, port: 15001 } },
      /port 15001 is one of the listen ports/,
    ],
    [
      'probe port = inbound port',
      { ...istio, probe: { ...istio.probe, port: 15006 } },
      /port 15006 is one of the listen ports/,
    ],
    [
      'external probe on the outbound port',
      { ...linkerd, probe: { ...linkerd.probe, port: 4140 } },
      /one of the listen ports/,
    ],
    ['unspecified IPv4 probe', { ...istio, probe: { host: '0.0.0.0', port: 15002, family: 4 } }, /unspecified address/],
    ['unspecified IPv6 probe', { ...istio6, probe: { host: '::', port: 15002, family: 6 } }, /unspecified address/],
    [
      'IPv6 probe, IPv4 listener',
      { ...istio6, listenAddress: '127.0.0.1' },
      /--listen-address 127\.0\.0\.1 is IPv4 but the probe is IPv6/,
    ],
    [
      'IPv4 probe, IPv6 source',
      { ...istio, sourceAddress: '::1' },
      /--source-address ::1 is IPv6 but the probe is IPv4/,
    ],
    [
      'external probe from loopback',
      { ...linkerd, sourceAddress: '127.0.0.1' },
      /a loopback source cannot be routed off the pod/,
    ],
  ])('refuses %s', (_, opts, problem) => expect(optionsProblem(opts)).toMatch(problem));
});

describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.0.0.6', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['::6', false],
    ['128.0.0.1', false],
    ['10.244.0.1', false],
  ])('%s → %s', (host, want) => expect(isLoopback(host)).toBe(want));
});
