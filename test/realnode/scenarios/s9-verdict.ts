// What S9's node side must show, per runtime (s9-node-side.ts says why): on containerd 2.4 meshgate's NRI plugin
// refuses the image whose USER is the proxy's before it runs and denies the others their set*id to it, so nothing gets
// past; on containerd 1.6 (no NRI) every app switches, and the node agent's guard must kill it and remove its pod
// with an Event. Everywhere: an app that got past and was not stopped is meshgate's failure (`unstopped`, in K).
import type { TierRuntime } from '../harness/containerd2.ts';
import { NODE_SIDE_NAMESPACE } from '../harness/mesh.ts';
import type { NodeOutcome, NodeShape } from './s9-node-side.ts';
import { oneLine } from './common.ts';

export interface NodeVerdict {
  seen: string[];
  failures: string[];
  /** Apps that got past the proxy and were not stopped. */
  unstopped: number;
  /** Connections that got past before the node stopped their app (the window, measured). */
  windowEscapes: number;
}

const secs = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);

function summary(o: NodeOutcome): string {
  const ran = o.ran ? `ran ${secs(o.ranMs)}` : `never ran${o.waiting ? ` (${oneLine(o.waiting, 400)})` : ''}`;
  const setuid = o.setuid === undefined ? '' : `; setuid to the proxy's UID ${o.setuid}`;
  const window = o.windowMs === undefined ? '' : `; as the proxy for ${secs(o.windowMs)}`;
  return (
    `${ran}${setuid}${window}; connections past the proxy ${o.past}, to the proxy ${o.reached}; ` +
    `${o.removed ? 'pod removed' : 'pod kept'}; Events: ${o.events.join(' | ') || 'none'}; ` +
    `${o.lines} lines read, the last ${o.last ?? '—'}`
  );
}

export function judgeNodeSide(
  runtime: TierRuntime,
  outcomes: readonly NodeOutcome[],
  describe: Record<NodeShape, string>,
): NodeVerdict {
  const v: NodeVerdict = { seen: [], failures: [], unstopped: 0, windowEscapes: 0 };
  const nri = runtime === 'containerd-2.4';
  for (const o of outcomes) {
    const where = `${NODE_SIDE_NAMESPACE}/${o.shape} (${describe[o.shape]}) on ${runtime}`;
    const fail = (why: string) => v.failures.push(`${where}: ${why} — ${summary(o)}`);
    const stopped = o.removed && o.events.some((e) => e.startsWith('MeshProxyIdentityStopped'));
    v.seen.push(`${where}: ${summary(o)}`);
    if (o.past > 0 && !stopped) {
      v.unstopped++;
      fail('got past the proxy and was not stopped (pod removed, MeshProxyIdentityStopped Event)');
    } else v.windowEscapes += o.past;
    if (nri && o.shape === 'image-user') {
      if (o.ran) fail("ran although its image's USER is the proxy's: meshgate's NRI plugin should have refused it");
      if (!o.waiting?.includes('[proxy_identity_refused]'))
        fail("the kubelet shows no refusal by meshgate's NRI plugin ([proxy_identity_refused])");
      if (!o.events.some((e) => e.startsWith('MeshProxyIdentityRefused')))
        fail('the node agent recorded no MeshProxyIdentityRefused Event');
    } else if (nri) {
      if (!o.ran) fail("never ran: only its set*id to the proxy's UID should have been denied");
      if (o.setuid === 'ok' || o.past > 0)
        fail("switched to the proxy's UID: meshgate's NRI plugin's seccomp rules did not hold");
      if (o.reached === 0) fail('no connection reached the proxy');
      if (o.removed) fail('its pod was removed although it never ran as the proxy');
    } else {
      if (o.windowMs === undefined) fail("never ran as the proxy's UID: the case shows nothing on this runtime");
      if (!stopped) fail("ran as the proxy's UID and was not stopped by the node agent");
    }
  }
  return v;
}
