/**
 * Istio's interface rerouting (issue 33 §8): `istio-iptables -k` (--kube-virt-interfaces), which istiod's template
 * writes from the pod's `traffic.sidecar.istio.io/kubevirtInterfaces` and `istio.io/reroute-virtual-interfaces`
 * annotations and istio-cni reads from the same two annotations (cni/pkg/plugin/sidecar_redirect.go), inserts
 * `-t nat -I PREROUTING 1 -i <interface> -j ISTIO_REDIRECT` (tools/istio-iptables/pkg/capture/run.go
 * handleOutboundIncludeRules): what ARRIVES on that interface is sent to the proxy's OUTBOUND listener, as if the pod
 * itself had sent it. Meant for KubeVirt: a virtual machine inside the pod sends through a bridge (k6t-eth0, a tap
 * device) whose traffic the OUTPUT chain never sees, so rerouting it meshes more. Named on an interface that carries
 * traffic from OUTSIDE the pod (its primary eth0, a Multus network's net<N>, loopback, or an iptables wildcard `+`
 * matching those), it turns the proxy into an outbound relay for anyone who reaches the pod: their plaintext
 * connection skips the inbound listener (and with it the mesh's inbound mTLS and authorization policy) and leaves
 * with the pod's identity. Those names are refused; other names are the pod's own virtual interfaces.
 */
import type { Problem } from './types.ts';

/**
 * The pod's interfaces that face outside it: loopback, the kubelet's CNI_IFNAME (always eth0), Multus' default names
 * for additional networks (net1, net2, …; multus-cni pkg/types), and any iptables wildcard.
 */
function outsideFacing(name: string): string | undefined {
  if (name.includes('+')) return 'an iptables wildcard, which matches the interfaces traffic reaches the pod by';
  if (name === 'lo') return 'loopback';
  if (name === 'eth0') return "the pod's primary network interface";
  if (/^net\d+$/.test(name)) return "a Multus network's interface";
  return undefined;
}

/**
 * Why rerouting the interfaces of `value` (comma-separated, as istio-iptables splits it: empty items dropped, the rest
 * taken as written) would let traffic from outside the pod use the proxy's outbound path; undefined when it would not.
 */
export function rerouteProblem(where: string, value: string | undefined): Problem {
  if (value === undefined) return undefined;
  for (const name of value.split(',')) {
    if (name === '') continue;
    const why = outsideFacing(name);
    if (why)
      return (
        `${where} reroutes "${name}" (${why}): traffic arriving there would go to the proxy's outbound listener, ` +
        "skipping its inbound policy and leaving with the pod's identity"
      );
  }
  return undefined;
}

/** The pod annotations istio-iptables' -k comes from (the template writes both; the later one wins). */
export const REROUTE_ANNOTATIONS = [
  'traffic.sidecar.istio.io/kubevirtInterfaces',
  'istio.io/reroute-virtual-interfaces',
];
