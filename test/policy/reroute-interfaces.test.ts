/**
 * Issue 33 §8: Istio's two interface-rerouting annotations (traffic.sidecar.istio.io/kubevirtInterfaces,
 * istio.io/reroute-virtual-interfaces), which istiod's template writes as istio-iptables -k and istio-cni reads
 * itself, and the -k flag of an istio-init written by hand: an interface that faces outside the pod is refused
 * (its inbound traffic would reach the proxy's outbound listener), a virtual machine's bridge inside the pod is not.
 */
import { describe, expect, it } from 'vitest';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { rerouteProblem } from '../../src/mesh/reroute-interfaces.ts';
import { cfg, input, istio, istioPod, verified } from './mutate/fixtures.ts';

const KUBEVIRT = 'traffic.sidecar.istio.io/kubevirtInterfaces';
const REROUTE = 'istio.io/reroute-virtual-interfaces';

describe('which interfaces a pod may reroute into the outbound capture', () => {
  it.each([
    ['eth0', /the pod's primary network interface/],
    ['lo', /loopback/],
    ['net1', /Multus network/],
    ['eth+', /wildcard/],
    ['+', /wildcard/],
    ['k6t-eth0,eth0', /"eth0"/],
  ])('%s is refused', (value, why) => {
    expect(rerouteProblem('x', value)).toMatch(why);
  });
  it.each([['k6t-eth0'], ['tap0'], ['k6t-eth0,tap0'], [''], [',,'], [undefined]])('%s is allowed', (value) => {
    expect(rerouteProblem('x', value)).toBeUndefined();
  });
});

describe('the annotations and istio-init -k, judged as the redirect', () => {
  const refused = [
    ['annotation kubevirtInterfaces eth0', istioPod({}, { [KUBEVIRT]: 'eth0' }), new RegExp(`annotation ${KUBEVIRT}`)],
    ['annotation reroute-virtual-interfaces +', istioPod({}, { [REROUTE]: '+' }), new RegExp(`annotation ${REROUTE}`)],
    [
      'istio-init -k eth0',
      istioPod({ initContainers: [istio.init({ args: [...istio.init().args!, '-k', 'eth0'] })] }),
      /istio-init -k \(--kube-virt-interfaces\) reroutes "eth0"/,
    ],
    [
      'istio-init --kube-virt-interfaces=lo',
      istioPod({ initContainers: [istio.init({ args: [...istio.init().args!, '--kube-virt-interfaces=lo'] })] }),
      /reroutes "lo"/,
    ],
  ] as const;
  it.each(refused)('%s is refused (redirect_narrowed)', (_n, p, message) => {
    const r = checkPosture(input(p), verified, cfg('istio'));
    expect(r).toMatchObject({ ok: false, reason: 'redirect_narrowed' });
    expect(!r.ok && r.message).toMatch(message);
    expect(decide(input(p), verified, cfg('istio'))).toMatchObject({ kind: 'deny', reason: 'redirect_narrowed' });
  });

  it("a virtual machine's bridge is allowed, as istiod writes it", () => {
    const p = istioPod(
      { initContainers: [istio.init({ args: [...istio.init().args!, '-k', 'k6t-eth0'] })] },
      { [KUBEVIRT]: 'k6t-eth0' },
    );
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: true });
  });
});
