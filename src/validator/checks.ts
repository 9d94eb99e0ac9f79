/**
 * Option combinations that would make the check meaningless or could never succeed, refused before anything is
 * bound or sent. Each rule says what it prevents; table-tested in test/validator/checks.test.ts.
 */
import { BlockList, isIPv4 } from 'node:net';
import { listenPorts, type ValidateOptions } from './options.ts';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const UNSPECIFIED = new BlockList();
UNSPECIFIED.addAddress('0.0.0.0', 'ipv4');
UNSPECIFIED.addAddress('::', 'ipv6');

export function isLoopback(host: string): boolean {
  return LOOPBACK.check(host, isIPv4(host) ? 'ipv4' : 'ipv6');
}

function isUnspecified(host: string): boolean {
  return UNSPECIFIED.check(host, isIPv4(host) ? 'ipv4' : 'ipv6');
}

function familyOf(host: string): 4 | 6 {
  return isIPv4(host) ? 4 : 6;
}

/** The first problem with `opts`, as a sentence naming the flags involved; undefined when they make sense. */
export function optionsProblem(opts: ValidateOptions): string | undefined {
  const { probe } = opts;
  if (opts.inboundPort !== null && opts.inboundPort === opts.outboundPort) {
    return `--inbound-port ${opts.inboundPort} equals --outbound-port: the proxy cannot capture both on one port`;
  }
  // Trivially reachable: a listener on the probe's port answers a probe to its own address (or to any address, when
  // it binds a wildcard) without any redirection. For a pod-scope probe the stand-in at the destination could not
  // bind either. Refused for every address rather than reasoned about per address.
  if (listenPorts(opts).includes(probe.port)) {
    return (
      `--probe-address port ${probe.port} is one of the listen ports (--outbound-port, --inbound-port): ` +
      'a probe to a local address could reach a listener without any redirection'
    );
  }
  if (isUnspecified(probe.host)) {
    return (
      `--probe-address ${probe.host} is the unspecified address, which Linux connects to this host itself; ` +
      'use 127.0.0.6 (or ::6)'
    );
  }
  if (familyOf(opts.listenAddress) !== probe.family && opts.listenAddress !== '::') {
    return (
      `--listen-address ${opts.listenAddress} is IPv${familyOf(opts.listenAddress)} ` +
      `but the probe is IPv${probe.family}: REDIRECT delivers to the probe family's loopback`
    );
  }
  const source = opts.sourceAddress;
  if (source !== null && familyOf(source) !== probe.family) {
    return `--source-address ${source} is IPv${familyOf(source)} but the probe is IPv${probe.family}`;
  }
  if (opts.scope === 'external' && source !== null && isLoopback(source) && !isLoopback(probe.host)) {
    return (
      `--source-address ${source} with --external-probe: a loopback source cannot be routed off the pod, ` +
      'where the probe must go to be redirected (Linux refuses it for IPv4 with EINVAL; IPv6 receivers drop it)'
    );
  }
  return undefined;
}
