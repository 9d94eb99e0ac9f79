/**
 * The default probe (127.0.0.6:15002 from 127.0.0.1, listeners on 15001 and 15006) against Istio's own rules in a
 * real pod netns, the validator running as a given UID/GID with no capabilities. What each case proves, and the pod's
 * transmit counter: with or without the rules, not one packet leaves the pod. Needs root, iproute2, iptables.
 */
import { describe, expect, it } from 'vitest';
import { ISTIO_PROXY_UID, istioRules } from './mesh-rules.ts';
import { expectFailure, usePod } from './pod-fixture.ts';

const pod = usePod();
const PROXY = { uid: ISTIO_PROXY_UID, gid: ISTIO_PROXY_UID };
const DEFAULT_FIELDS = {
  probeAddress: '127.0.0.6:15002',
  probeScope: 'pod',
  sourceAddress: '127.0.0.1',
  outboundPort: 15001,
  inboundPort: 15006,
};

describe("the default probe under Istio's rules", () => {
  it('(a) rules present, validator as the proxy UID/GID 1337: proven through the inbound capture port, nothing leaves the pod', async () => {
    pod.install(istioRules(4));
    const { run, podTx, remoteTcp } = await pod.validate([], PROXY);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^meshgate validate-redirect: ok: TCP from 127\.0\.0\.1:\d+ to 127\.0\.0\.6:15002 was redirected to 127\.0\.0\.1:15006 \(the inbound capture port\) on node node-under-test \(proof verified in \d+ms\)\n$/,
    );
    expect(run.termination).toBe('');
    expect(podTx, 'packets transmitted by the pod').toBe(0);
    expect(remoteTcp).toBe(0);
    console.info(`(a) proof: ${run.stdout.trim()}; wall ${Math.round(run.wallMs)}ms including Node start-up`);
  });

  it('(b) no rules: not_redirected at once (the stand-in at 127.0.0.6 answered), and zero packets leave the pod', async () => {
    const { run, podTx, remoteTcp } = await pod.validate(['--timeout', '3s'], PROXY);
    const msg = expectFailure(run, 'not_redirected', DEFAULT_FIELDS);
    expect(msg.detail).toMatch(
      /^connected from 127\.0\.0\.1:\d+ to 127\.0\.0\.6:15002 .*no rule rewrote the destination.*\(uid 1337 gid 1337\)/,
    );
    expect(podTx, 'packets transmitted by the pod').toBe(0);
    expect(remoteTcp).toBe(0);
    console.info(`(b) no rules: verdict after ${msg.elapsedMs}ms (timeout 3000ms), pod transmitted ${podTx} packets`);
  });

  it.each([
    ['another UID and GID', { uid: 1338, gid: 1338 }],
    ['the proxy GID but another UID', { uid: 1338, gid: ISTIO_PROXY_UID }],
    ['root without capabilities', { uid: 0, gid: 0 }],
  ])(
    '(c) rules present, validator as %s: not_redirected, so the injected container must run as the proxy UID',
    async (_, as) => {
      pod.install(istioRules(4));
      const { run, podTx } = await pod.validate([], as);
      const msg = expectFailure(run, 'not_redirected', DEFAULT_FIELDS);
      expect(msg.detail).toContain(`(uid ${as.uid} gid ${as.gid})`);
      expect(podTx).toBe(0);
    },
  );

  it('rules that redirect to the wrong port: redirect_missing, refused at once inside the pod, nothing leaves', async () => {
    pod.install(istioRules(4, { outbound: 15011, inbound: 15016 }));
    const { run, podTx } = await pod.validate([], PROXY);
    const msg = expectFailure(run, 'redirect_missing', DEFAULT_FIELDS);
    expect(msg.detail).toMatch(
      /refused at once inside the pod although the validator listens on 127\.0\.0\.6:15002 itself.*wrong port/,
    );
    expect(podTx).toBe(0);
  });

  it("a probe from 127.0.0.6 is exempt (Istio's inbound passthrough source): why the source is 127.0.0.1", async () => {
    pod.install(istioRules(4));
    const { run, podTx } = await pod.validate(['--source-address', '127.0.0.6'], PROXY);
    expectFailure(run, 'not_redirected', { ...DEFAULT_FIELDS, sourceAddress: '127.0.0.6' });
    expect(podTx).toBe(0);
  });

  it('the old default 192.0.2.1:80 without --external-probe: probe_not_local before anything is sent', async () => {
    pod.install(istioRules(4));
    const { run, podTx, remoteTcp } = await pod.validate(['--probe-address', '192.0.2.1:80'], PROXY);
    const msg = expectFailure(run, 'probe_not_local', { ...DEFAULT_FIELDS, probeAddress: '192.0.2.1:80' });
    expect(msg.detail).toMatch(/192\.0\.2\.1 is not an address of this pod .*EADDRNOTAVAIL.*nothing was sent/);
    expect(podTx).toBe(0);
    expect(remoteTcp).toBe(0);
  });
});
