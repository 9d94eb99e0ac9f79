/**
 * What lets an ambient pod's author take it out of ztunnel's capture silently, one rule per input, each a reason
 * code and the sentence naming the value (research: Istio 1.27 cni/pkg/nodeagent/net.go, informers.go):
 * - `ambient.istio.io/redirection` is istio-cni's record that it enrolled the pod; pre-set at CREATE it makes the
 *   node agent's informer believe so and never enrol the pod late (informers.go: isEnrolled == shouldBeEnabled);
 * - `ambient.istio.io/bypass-inbound-capture` switches off inbound capture (ingress mode);
 * - `ambient.istio.io/dns-capture` false (or the cluster's DNS capture off without the pod turning it on) drops the
 *   DNS rules, and with them what meshgate's ambient validator proves.
 * Pure: (pod, compiled config) → refusal or undefined.
 */
import type { Compiled } from '../../config/compile.ts';
import { goBool } from '../../mesh/flags.ts';
import type { ReasonCode } from '../../contract/reasons.ts';
import type { Pod } from '../../contract/pod.ts';

export const REDIRECTION = 'ambient.istio.io/redirection';
export const BYPASS_INBOUND = 'ambient.istio.io/bypass-inbound-capture';
export const DNS_CAPTURE = 'ambient.istio.io/dns-capture';

/** Every annotation this file reads, so their lengths are bounded before any is read (policy/limits.ts). */
export const AMBIENT_ANNOTATIONS = [REDIRECTION, BYPASS_INBOUND, DNS_CAPTURE] as const;

export interface Refusal {
  readonly reason: ReasonCode;
  readonly message: string;
}

/** Who sent an UPDATE: the username, and the node its token is bound to (a pod-bound ServiceAccount token's claim). */
export interface Requester {
  readonly username?: string;
  readonly node?: string;
}

/**
 * Whether an UPDATE of an existing pod may change REDIRECTION (set, change or remove it): only istio-cni's node agent,
 * as `ambient.cniServiceAccount` with a token bound to a pod on the pod's own node, writes it — once it enrolled the
 * pod ("enabled"; "pending" while half done), and removes it when it takes the pod out of the mesh. Anyone else's
 * value is a lie about the pod's capture: istiod then routes to it as captured, istio-cni's informer believes it
 * enrolled (or not), and meshgate reads its removal as the pod losing its capture (src/repair/capture/). Istio 1.27
 * writes it through pods/status, which meshgate's webhooks do not select; this is the pods UPDATE path (issue 33 §8).
 */
export function redirectionChange(old: Pod, now: Pod, who: Requester, cfg: Compiled): Refusal | undefined {
  const was = old.metadata?.annotations?.[REDIRECTION];
  const is = now.metadata?.annotations?.[REDIRECTION];
  if (was === is) return undefined;
  const [ns, name] = cfg.config.ambient.cniServiceAccount.split('/');
  const cni = `system:serviceaccount:${ns}:${name}`;
  const node = now.spec.nodeName;
  if (who.username === cni && node !== undefined && who.node === node) return undefined;
  const change = `${JSON.stringify(was ?? null)} → ${JSON.stringify(is ?? null)}`;
  const by =
    who.username !== cni
      ? `${who.username ?? 'an unknown requester'} is not istio-cni (${cni})`
      : `the request's token is bound to ${who.node ? `node ${who.node}` : 'no node'}, not the pod's node ${node ?? '(none yet)'}`;
  return {
    reason: 'ambient_redirection_changed',
    message:
      `the update changes annotation ${REDIRECTION} (${change}), which only istio-cni's node agent on the pod's ` +
      `node writes, to record whether ztunnel captures the pod: ${by}`,
  };
}

/** `existing`: an UPDATE of a pod istio-cni may already have annotated (it writes REDIRECTION once it enrolled it). */
export function ambientRefusal(pod: Pod, cfg: Compiled, existing = false): Refusal | undefined {
  const a = pod.metadata?.annotations ?? {};
  if (a[REDIRECTION] !== undefined && !existing)
    return {
      reason: 'ambient_redirection_preset',
      message:
        `the pod sets annotation ${REDIRECTION}="${a[REDIRECTION]}", which only istio-cni writes once ztunnel serves ` +
        'the pod; pre-set, it keeps istio-cni from enrolling a pod it missed',
    };
  // istio-cni reads it with strconv.ParseBool; any true value bypasses (nodeagent/net.go).
  if (goBool(a[BYPASS_INBOUND]) === true)
    return {
      reason: 'ambient_inbound_bypass',
      message: `the pod sets annotation ${BYPASS_INBOUND}="${a[BYPASS_INBOUND]}": its inbound traffic would bypass ztunnel`,
    };
  const pod_ = goBool(a[DNS_CAPTURE]);
  if (pod_ === false || (pod_ === undefined && !cfg.config.ambient.dnsCapture))
    return {
      reason: 'ambient_dns_capture_off',
      message:
        pod_ === false
          ? `the pod sets annotation ${DNS_CAPTURE}="${a[DNS_CAPTURE]}": without DNS capture meshgate's ambient ` +
            'validator cannot prove the in-pod redirection (its probe is what the DNS rule redirects)'
          : `DNS capture is off in this cluster (ambient.dnsCapture false) and the pod does not set ${DNS_CAPTURE}="true": ` +
            "meshgate's ambient validator cannot prove the in-pod redirection without it",
    };
  return undefined;
}
