/**
 * Linkerd's rules (proxy-init) in a real pod netns: why meshgate cannot keep Linkerd's probe inside the pod. The rules
 * RETURN everything leaving through lo for every UID, so a loopback probe is never redirected; only a probe routed off
 * the pod reaches the REDIRECT rule — and when the rules are missing, that probe's SYN leaves the pod. The external
 * probe gives up before Linux would retransmit, so exactly one SYN leaves; the remote netns counts it.
 */
import { describe, expect, it } from 'vitest';
import { LINKERD_PROXY_UID, linkerdRules } from './mesh-rules.ts';
import { podTxPackets, run, setDefaultRoute } from './netns.ts';
import { expectFailure, FORGING_PORT, usePod } from './pod-fixture.ts';
import { NODE, NOBODY } from './run-validator.ts';

const pod = usePod({ forgingServer: true });
const AS_NOBODY = { uid: NOBODY, gid: NOBODY };
const EXTERNAL = ['--external-probe', '--outbound-port', '4140', '--inbound-port', 'none', '--timeout', '3s'];
const EXTERNAL_FIELDS = {
  probeAddress: '192.0.2.1:80',
  probeScope: 'external',
  sourceAddress: null,
  outboundPort: 4140,
  inboundPort: null,
};

describe("Linkerd's rules", () => {
  it.each([
    ['the proxy UID 2102', LINKERD_PROXY_UID],
    ['nobody (65534, as linkerd-network-validator)', NOBODY],
    ["Istio's proxy UID 1337", 1337],
  ])('(d) a loopback probe is never redirected, whatever the UID: %s', async (_, uid) => {
    pod.install(linkerdRules());
    const { run, podTx } = await pod.validate(['--outbound-port', '4140', '--inbound-port', '4143'], { uid, gid: uid });
    expectFailure(run, 'not_redirected', { probeAddress: '127.0.0.6:15002', outboundPort: 4140, inboundPort: 4143 });
    expect(podTx).toBe(0);
  });

  it('(d) an external probe is redirected to 4140, and with the rules in place nothing leaves the pod', async () => {
    pod.install(linkerdRules());
    const { run, podTx, remoteTcp } = await pod.validate(EXTERNAL, AS_NOBODY);
    expect(run.code, run.stderr).toBe(0);
    const podIp = pod.topo().podIp.replaceAll('.', '\\.');
    expect(run.stdout).toMatch(
      new RegExp(
        `^meshgate validate-redirect: ok: TCP from ${podIp}:\\d+ to 192\\.0\\.2\\.1:80 was redirected to 127\\.0\\.0\\.1:4140 \\(the outbound capture port\\)`,
      ),
    );
    expect(podTx).toBe(0);
    expect(remoteTcp).toBe(0);
  });

  it("(d) rules missing: the external probe's SYN leaves the pod — exactly one — and the verdict is timeout", async () => {
    const { run, podTx, podTcp, remoteTcp } = await pod.validate(EXTERNAL, AS_NOBODY);
    const msg = expectFailure(run, 'timeout', EXTERNAL_FIELDS);
    expect(msg.detail).toMatch(/within 800ms.*at most one SYN left the pod/);
    expect(remoteTcp, 'SYNs that reached the remote netns').toBe(1);
    expect(podTcp, 'TCP packets that left the pod').toBe(1);
    expect(podTx, 'packets transmitted by the pod (the SYN, and ARP for the gateway)').toBeGreaterThan(0);
    console.info(
      `(d) rules missing: ${remoteTcp} SYN reached the remote netns, pod transmitted ${podTx} packets, verdict after ${msg.elapsedMs}ms`,
    );
  });

  it('a loopback source cannot reach the REDIRECT rule either: connect() fails with EINVAL, nothing leaves (the kernel, not the validator)', () => {
    pod.install(linkerdRules());
    const before = podTxPackets(pod.topo());
    // A plain client, not meshgate's code (the CLI refuses this combination): bind 127.0.0.1, connect off the pod.
    const client = `const s=require('node:net').connect({host:'192.0.2.1',port:80,localAddress:'127.0.0.1'});s.on('error',(e)=>{console.log(e.code);s.destroy()});s.on('connect',()=>{console.log('connected');s.destroy()});`;
    const out = run('ip', [
      'netns',
      'exec',
      pod.topo().pod,
      'setpriv',
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      NODE,
      '-e',
      client,
    ]);
    expect(out.trim()).toBe('EINVAL');
    expect(podTxPackets(pod.topo()) - before).toBe(0);
  });

  it('rules present but the validator runs as the proxy UID 2102: exempt, and its SYN leaves the pod', async () => {
    pod.install(linkerdRules());
    const { run, remoteTcp } = await pod.validate(EXTERNAL, { uid: LINKERD_PROXY_UID, gid: LINKERD_PROXY_UID });
    expectFailure(run, 'timeout', EXTERNAL_FIELDS);
    expect(remoteTcp).toBe(1);
  });
});

describe('an external probe at other destinations', () => {
  it('a server at the probe address that knows the protocol cannot forge the proof: wrong_listener', async () => {
    const probe = `${pod.topo().remoteIp}:${FORGING_PORT}`;
    const { run } = await pod.validate([...EXTERNAL, '--probe-address', probe], AS_NOBODY);
    expect(expectFailure(run, 'wrong_listener', { ...EXTERNAL_FIELDS, probeAddress: probe }).detail).toMatch(
      /not a proof for our token and connection/,
    );
    expect(pod.serverConnections()).toBe(1);
  });

  it('a closed port at the probe address: redirect_missing (refused by the remote host)', async () => {
    const probe = `${pod.topo().remoteIp}:8081`;
    const { run, remoteTcp } = await pod.validate([...EXTERNAL, '--probe-address', probe], AS_NOBODY);
    expect(expectFailure(run, 'redirect_missing', { ...EXTERNAL_FIELDS, probeAddress: probe }).detail).toMatch(
      /ECONNREFUSED/,
    );
    expect(remoteTcp).toBeGreaterThan(0);
  });

  it('with rules but no route to the probe address, connect fails before the nat OUTPUT chain: redirect_missing', async () => {
    pod.install(linkerdRules());
    setDefaultRoute(pod.topo(), false);
    const { run, podTx } = await pod.validate(EXTERNAL, AS_NOBODY);
    expect(expectFailure(run, 'redirect_missing', EXTERNAL_FIELDS).detail).toMatch(/ENETUNREACH/);
    expect(podTx).toBe(0);
  });

  it('with rules, a protocol-aware server at the probe address never sees the redirected probe', async () => {
    pod.install(linkerdRules());
    const { run, remoteTcp } = await pod.validate(
      [...EXTERNAL, '--probe-address', `${pod.topo().remoteIp}:${FORGING_PORT}`],
      AS_NOBODY,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(remoteTcp).toBe(0);
    expect(pod.serverConnections()).toBe(0);
  });
});
