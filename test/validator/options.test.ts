/** Pins the validator's defaults (the webhook injects the container relying on them) and the edge parsers. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EXTERNAL_PROBE_ADDRESS,
  DEFAULT_INBOUND_PORT,
  DEFAULT_OUTBOUND_PORT,
  DEFAULT_PROBE_ADDRESS,
  DEFAULT_PROBE_ADDRESS_IPV6,
  DEFAULT_TERMINATION_LOG,
  DEFAULT_TIMEOUT_MS,
  defaultListenAddress,
  defaultSourceAddress,
  EXTERNAL_SYN_WINDOW_MS,
  listenPorts,
  parseEndpoint,
  parseProbePort,
} from '../../src/validator/options.ts';
import { VALIDATOR_REASONS, VALIDATION_FAILED_EXIT_CODE, describeReason } from '../../src/validator/reasons.ts';

describe('defaults', () => {
  it('are pinned', () => {
    expect({
      DEFAULT_OUTBOUND_PORT,
      DEFAULT_INBOUND_PORT,
      DEFAULT_PROBE_ADDRESS,
      DEFAULT_PROBE_ADDRESS_IPV6,
      DEFAULT_EXTERNAL_PROBE_ADDRESS,
      DEFAULT_TIMEOUT_MS,
      EXTERNAL_SYN_WINDOW_MS,
      DEFAULT_TERMINATION_LOG,
      VALIDATION_FAILED_EXIT_CODE,
    }).toEqual({
      DEFAULT_OUTBOUND_PORT: 15001,
      DEFAULT_INBOUND_PORT: 15006,
      DEFAULT_PROBE_ADDRESS: '127.0.0.6:15002',
      DEFAULT_PROBE_ADDRESS_IPV6: '[::6]:15002',
      DEFAULT_EXTERNAL_PROBE_ADDRESS: '192.0.2.1:80',
      DEFAULT_TIMEOUT_MS: 5000,
      EXTERNAL_SYN_WINDOW_MS: 800,
      DEFAULT_TERMINATION_LOG: '/dev/termination-log',
      VALIDATION_FAILED_EXIT_CODE: 42,
    });
    expect(VALIDATOR_REASONS).toEqual([
      'redirect_missing',
      'timeout',
      'wrong_listener',
      'listen_failed',
      'internal_error',
      'not_redirected',
      'probe_not_local',
      'ambient_not_captured',
    ]);
  });

  it('the external probe gives up before Linux retransmits a SYN (1 s initial RTO)', () => {
    expect(EXTERNAL_SYN_WINDOW_MS).toBeLessThan(1000);
  });

  it('listen on the loopback address REDIRECT delivers to, per family', () => {
    expect(defaultListenAddress(4)).toBe('127.0.0.1');
    expect(defaultListenAddress(6)).toBe('::1');
  });

  it("a pod-scope probe comes from loopback (as Istio's), an external one from the kernel's choice", () => {
    expect(defaultSourceAddress(4, 'pod')).toBe('127.0.0.1');
    expect(defaultSourceAddress(6, 'pod')).toBe('::1');
    expect(defaultSourceAddress(4, 'external')).toBeNull();
    expect(defaultSourceAddress(6, 'external')).toBeNull();
  });

  it('listens on the outbound port, then the inbound one unless there is none', () => {
    expect(listenPorts({ outboundPort: 15001, inboundPort: 15006 })).toEqual([15001, 15006]);
    expect(listenPorts({ outboundPort: 4140, inboundPort: null })).toEqual([4140]);
  });

  it('every reason has its own sentence', () => {
    const sentences = VALIDATOR_REASONS.map(describeReason);
    expect(new Set(sentences).size).toBe(VALIDATOR_REASONS.length);
  });
});

describe('parseEndpoint', () => {
  it.each([
    ['127.0.0.6:15002', { host: '127.0.0.6', port: 15002, family: 4 }],
    ['[::6]:15002', { host: '::6', port: 15002, family: 6 }],
    ['192.0.2.1:80', { host: '192.0.2.1', port: 80, family: 4 }],
    ['[2001:db8::1]:443', { host: '2001:db8::1', port: 443, family: 6 }],
    ['10.244.0.2:65535', { host: '10.244.0.2', port: 65535, family: 4 }],
  ])('%s', (text, want) => expect(parseEndpoint(text)).toEqual(want));

  it.each([
    ['192.0.2.1', /not IP:PORT/],
    ['example.com:80', /not an IP address/],
    ['2001:db8::1:80', /not IP:PORT/],
    ['::6:15002', /not IP:PORT/],
    ['192.0.2.1:0', /must not be 0/],
    ['192.0.2.1:70000', /max 65535/],
    ['192.0.2.1:http', /not IP:PORT/],
    ['999.0.2.1:80', /not an IP address/],
  ])('rejects %s', (text, err) => expect(parseEndpoint(text)).toMatch(err));
});

describe('parsePort', () => {
  it.each([
    ['15001', 15001],
    ['0', 0],
    ['-1', /not a port/],
    ['1e3', /not a port/],
    ['', /not a port/],
  ])('%s', (text, want) =>
    typeof want === 'number' ? expect(parseProbePort(text)).toBe(want) : expect(parseProbePort(text)).toMatch(want),
  );
});
