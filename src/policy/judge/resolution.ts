/**
 * How the proxy resolves its control plane's name (issue 33 §3). pilot-agent and Linkerd's proxy look the name up
 * themselves, from the pod's /etc/hosts and /etc/resolv.conf, as the exempt UID: a pod whose `hostAliases` map
 * `istiod.istio-system.svc` (or Linkerd's services) to its author's address, or whose resolvers are its author's
 * (`dnsPolicy: None`, `dnsConfig.nameservers`), sends the proxy to a control plane of the author's choosing, past the
 * redirect, while every field of the proxy still reads as the mesh's. So a meshed pod may not:
 * - map a control plane's host name in `hostAliases` (the name itself, or it with a search suffix appended; Go's and
 *   hickory's resolvers match /etc/hosts entries by the whole name, case-insensitively, a trailing dot ignored);
 * - choose its resolvers: `dnsPolicy: None`, or `dnsConfig.nameservers` (with `ClusterFirst` the kubelet lists them
 *   after the cluster's DNS, which a resolver falls back to when the cluster's fails or times out).
 * `dnsConfig.searches` and `options` stay free: the kubelet puts the cluster's search domains first, so the control
 * plane's name resolves in the cluster before any search domain of the pod's is tried.
 */
import type { Pod } from '../../contract/pod.ts';
import { type ControlPlane, controlPlaneHosts } from '../../mesh/control-plane.ts';
import { isObject } from '../../util/json.ts';
import type { Problem } from './types.ts';

/** Whether `alias` (a hostAliases hostname) could stand for `host` when the proxy looks `host` up. */
function standsFor(alias: string, host: string): boolean {
  const a = alias.toLowerCase().replace(/\.$/, '');
  return a === host || a.startsWith(`${host}.`);
}

/** Why the pod's name resolution could send the proxy to another control plane; undefined when it cannot. */
export function resolutionProblem(pod: Pod, cp: ControlPlane): Problem {
  const spec = pod.spec as Record<string, unknown>;
  const aliases = spec.hostAliases;
  // The control plane's names are worked out only for a pod that maps names (most map none).
  const hosts = aliases === undefined ? [] : controlPlaneHosts(cp);
  if (aliases !== undefined && hosts.length > 0) {
    if (!Array.isArray(aliases)) return 'spec.hostAliases is not a list';
    for (const entry of aliases) {
      const names = isObject(entry) && Array.isArray(entry.hostnames) ? entry.hostnames : [];
      for (const name of names) {
        if (typeof name !== 'string') continue;
        const host = hosts.find((h) => standsFor(name, h));
        if (host)
          return (
            `spec.hostAliases maps ${name} to ${isObject(entry) ? String(entry.ip) : '?'}: the proxy resolves its ` +
            `control plane ${host} from /etc/hosts, so it would connect to that address instead, past the redirect`
          );
      }
    }
  }
  if (spec.dnsPolicy === 'None')
    return (
      'spec.dnsPolicy is None: the pod chooses the resolvers its proxy looks its control plane up with; use ' +
      "ClusterFirst (dnsConfig's searches and options stay free)"
    );
  const dns = spec.dnsConfig;
  if (isObject(dns) && Array.isArray(dns.nameservers) && dns.nameservers.length > 0)
    return (
      `spec.dnsConfig.nameservers adds ${dns.nameservers.map(String).join(', ')}: the proxy would fall back to a ` +
      'resolver the pod chose when it looks its control plane up'
    );
  return undefined;
}
