/** Istio 1.27's ambient in-pod nat rules, as its node agent installs them (shared by the netns ambient tests). */
/**
 * The nat table of istio.io/istio@v0.0.0-20250808040725-7359d8be2504 cni/pkg/iptables/testdata/default.golden (the
 * node agent's CreateInpodRules with DNS capture on), verbatim; mangle and raw do not touch a TCP probe.
 */
export const AMBIENT_NAT = [
  '-N ISTIO_PRERT',
  '-N ISTIO_OUTPUT',
  '-A OUTPUT -j ISTIO_OUTPUT',
  '-A PREROUTING -j ISTIO_PRERT',
  '-A ISTIO_PRERT -s 169.254.7.127 -p tcp -m tcp -j ACCEPT',
  '-A ISTIO_OUTPUT -d 169.254.7.127 -p tcp -m tcp -j ACCEPT',
  '-A ISTIO_PRERT ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15006',
  '-A ISTIO_OUTPUT ! -o lo -p udp -m mark ! --mark 0x539/0xfff -m udp --dport 53 -j REDIRECT --to-port 15053',
  '-A ISTIO_OUTPUT ! -d 127.0.0.1/32 -p tcp --dport 53 -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15053',
  '-A ISTIO_OUTPUT -p tcp -m mark --mark 0x111/0xfff -j ACCEPT',
  '-A ISTIO_OUTPUT ! -d 127.0.0.1/32 -o lo -j ACCEPT',
  '-A ISTIO_OUTPUT ! -d 127.0.0.1/32 -p tcp -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15001',
];

/** The same rules without DNS capture (dns_pod_disabled_and_on_globally.golden): no port-53 rules. */
export const AMBIENT_NAT_NO_DNS = AMBIENT_NAT.filter((r) => !r.includes('--dport 53'));
