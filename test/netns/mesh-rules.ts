/**
 * The meshes' own nat rules, as their tools feed them to iptables-restore, so the validator is tested against what a
 * real pod has — not against rules written for the test.
 *
 * Istio: istio-iptables with the sidecar injection template's arguments (-p 15001 -z 15006 -u 1337 -g 1337
 * -m REDIRECT -i '*' -x "" -b '*' -d 15090,15021), i.e. istio's golden file
 * tools/istio-iptables/pkg/capture/testdata/inbound-ports-wildcard.golden (ipv6-empty-inbound-ports.golden for the
 * ip6tables half) plus the two excluded inbound ports and the `-i '*'` catch-all `-j ISTIO_REDIRECT` that
 * handleOutboundIncludeRules appends (kube-virt-interfaces.golden shows it). Checked against
 * istio.io/istio@v0.0.0-20250808040725-7359d8be2504, tools/istio-iptables/pkg/capture/run.go, and line for line
 * against that version's `istio-iptables --dry-run` with those arguments (the IPv4 half; by hand, not by the test).
 *
 * Linkerd: proxy-init's ConfigureFirewall (linkerd2-proxy-init iptables/iptables.go) with the chart's defaults:
 * proxy UID 2102, outbound 4140, inbound 4143, redirect-all, inbound ports 4190,4191,4567,4568 and outbound ports
 * 4567,4568 skipped. Its `-m comment` annotations are left out: they match nothing.
 */

export const ISTIO_PROXY_UID = 1337;
export const LINKERD_PROXY_UID = 2102;

export interface IstioPorts {
  /** istio-iptables -p (ISTIO_REDIRECT). */
  readonly outbound: number;
  /** istio-iptables -z (ISTIO_IN_REDIRECT). */
  readonly inbound: number;
}

export function istioRules(family: 4 | 6, ports: IstioPorts = { outbound: 15001, inbound: 15006 }): string[] {
  const [loopback, passthrough] = family === 4 ? ['127.0.0.1/32', '127.0.0.6/32'] : ['::1/128', '::6/128'];
  const owner = (kind: 'uid' | 'gid') => [
    `-A ISTIO_OUTPUT -o lo ! -d ${loopback} -p tcp ! --dport 15008 -m owner --${kind}-owner ${ISTIO_PROXY_UID} -j ISTIO_IN_REDIRECT`,
    `-A ISTIO_OUTPUT -o lo -m owner ! --${kind}-owner ${ISTIO_PROXY_UID} -j RETURN`,
    `-A ISTIO_OUTPUT -m owner --${kind}-owner ${ISTIO_PROXY_UID} -j RETURN`,
  ];
  return [
    '-N ISTIO_INBOUND',
    '-N ISTIO_REDIRECT',
    '-N ISTIO_IN_REDIRECT',
    '-N ISTIO_OUTPUT',
    '-A ISTIO_INBOUND -p tcp --dport 15008 -j RETURN',
    `-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports ${ports.outbound}`,
    `-A ISTIO_IN_REDIRECT -p tcp -j REDIRECT --to-ports ${ports.inbound}`,
    '-A PREROUTING -p tcp -j ISTIO_INBOUND',
    '-A ISTIO_INBOUND -p tcp --dport 15090 -j RETURN',
    '-A ISTIO_INBOUND -p tcp --dport 15021 -j RETURN',
    '-A ISTIO_INBOUND -p tcp -j ISTIO_IN_REDIRECT',
    '-A OUTPUT -j ISTIO_OUTPUT',
    `-A ISTIO_OUTPUT -o lo -s ${passthrough} -j RETURN`,
    ...owner('uid'),
    ...owner('gid'),
    `-A ISTIO_OUTPUT -d ${loopback} -j RETURN`,
    '-A ISTIO_OUTPUT -j ISTIO_REDIRECT',
  ];
}

export function linkerdRules(): string[] {
  return [
    '-N PROXY_INIT_REDIRECT',
    '-A PROXY_INIT_REDIRECT -p tcp --match multiport --dports 4190,4191,4567,4568 -j RETURN',
    '-A PROXY_INIT_REDIRECT -p tcp -j REDIRECT --to-port 4143',
    '-A PREROUTING -j PROXY_INIT_REDIRECT',
    '-N PROXY_INIT_OUTPUT',
    `-A PROXY_INIT_OUTPUT -m owner --uid-owner ${LINKERD_PROXY_UID} -j RETURN`,
    '-A PROXY_INIT_OUTPUT -o lo -j RETURN',
    '-A PROXY_INIT_OUTPUT -p tcp --match multiport --dports 4567,4568 -j RETURN',
    '-A PROXY_INIT_OUTPUT -p tcp -j REDIRECT --to-port 4140',
    '-A OUTPUT -j PROXY_INIT_OUTPUT',
  ];
}
