/**
 * The IPv6 variant, [::6]:15002 from ::1, in a dual-stack pod netns whose IPv6 default route leads to the remote
 * netns. Unlike 127.0.0.6, ::6 is not a loopback address: it is local only once the mesh assigns it to lo
 * (istio-iptables does, `ip -6 addr add ::6/128 dev lo`). Without that a connect to it follows the default route and
 * leaves the pod — the first case shows the kernel doing so — which is why the validator binds the probe address
 * before probing. Packets leaving are counted by a TCP counter in the pod's mangle POSTROUTING (the interface
 * counter also sees IPv6 neighbour discovery, which is the kernel's own).
 */
import { describe, expect, it } from 'vitest';
import { ISTIO_PROXY_UID, istioRules } from './mesh-rules.ts';
import { run, setLoopbackAddress } from './netns.ts';
import { seenTcp } from './iptables.ts';
import { expectFailure, usePod } from './pod-fixture.ts';
import { NODE } from './run-validator.ts';

const pod = usePod({ ipv6: true });
const PROXY = { uid: ISTIO_PROXY_UID, gid: ISTIO_PROXY_UID };
const V6 = ['--probe-address', '[::6]:15002'];
const V6_FIELDS = {
  probeAddress: '[::6]:15002',
  probeScope: 'pod',
  sourceAddress: '::1',
  outboundPort: 15001,
  inboundPort: 15006,
};

describe("the IPv6 probe under Istio's rules", () => {
  it('without ::6 on lo, a plain connect from ::1 to [::6]:15002 leaves the pod (the kernel, not the validator)', () => {
    setLoopbackAddress(pod.topo(), '::6/128', false);
    // A client like Istio's own validator: bind ::1, connect, give up after 300 ms. Not meshgate's code.
    const client = `const s=require('node:net').connect({host:'::6',port:15002,localAddress:'::1'});s.on('error',()=>{});setTimeout(()=>s.destroy(),300);`;
    run('ip', ['netns', 'exec', pod.topo().pod, NODE, '-e', client]);
    const left = seenTcp(pod.ipt(), pod.topo().pod, { table: 'mangle', chain: 'POSTROUTING', family: 6 });
    expect(left, 'SYNs from ::1 to ::6 that left through eth0').toBeGreaterThan(0);
    console.info(`plain connect to [::6]:15002 without ::6 on lo: ${left} TCP packet(s) left the pod`);
  });

  it('without ::6 on lo: probe_not_local, and the validator sends nothing', async () => {
    setLoopbackAddress(pod.topo(), '::6/128', false);
    pod.install(istioRules(6), 6);
    const { run: r, podTcp, remoteTcp } = await pod.validate(V6, PROXY);
    const msg = expectFailure(r, 'probe_not_local', V6_FIELDS);
    expect(msg.detail).toMatch(/::6 is not an address of this pod .*EADDRNOTAVAIL.*assigns ::6 to lo/);
    expect(podTcp).toBe(0);
    expect(remoteTcp).toBe(0);
  });

  it('with ::6 on lo and the rules, as the proxy UID/GID: proven through [::1]:15006, nothing leaves', async () => {
    setLoopbackAddress(pod.topo(), '::6/128', true);
    pod.install(istioRules(6), 6);
    const { run: r, podTcp, remoteTcp } = await pod.validate(V6, PROXY);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /ok: TCP from \[::1\]:\d+ to \[::6\]:15002 was redirected to \[::1\]:15006 \(the inbound capture port\)/,
    );
    expect(podTcp).toBe(0);
    expect(remoteTcp).toBe(0);
  });

  it('with ::6 on lo but no rules: not_redirected, nothing leaves', async () => {
    setLoopbackAddress(pod.topo(), '::6/128', true);
    const { run: r, podTcp } = await pod.validate(V6, PROXY);
    expectFailure(r, 'not_redirected', V6_FIELDS);
    expect(podTcp).toBe(0);
  });
});
