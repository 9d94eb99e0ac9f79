/**
 * Issue 33 §7 on the real kernel: a pod netns with Istio's own rules (a HEALTHY redirect) and one of the sysctls of
 * the kubelet's safe set a pod may set. meshgate's validator then cannot check — it says so (listen_failed,
 * internal_error), never not_redirected — and the repair controller deletes such a pod without counting it against
 * its node; admission refuses each of these sysctls (src/policy/sysctls.ts), which the last case checks on the same
 * values. Needs root, iproute2, iptables.
 */
import { describe, expect, it } from 'vitest';
import { decideRepair } from '../../src/repair/failed/decide.ts';
import { VALIDATION_FAILURES } from '../../src/repair/failed/failures.ts';
import { probeSysctlProblem } from '../../src/policy/sysctls.ts';
import { ISTIO_PROXY_UID, istioRules } from './mesh-rules.ts';
import { run } from './netns.ts';
import { expectFailure, usePod } from './pod-fixture.ts';
import { cfg, istioPod } from '../policy/mutate/fixtures.ts';

const pod = usePod();
const PROXY = { uid: ISTIO_PROXY_UID, gid: ISTIO_PROXY_UID };

const CASES = [
  ['net.ipv4.ip_unprivileged_port_start', '20000', 'listen_failed', /EACCES/],
  [
    'net.ipv4.ip_local_port_range',
    '15001 15001',
    'internal_error',
    /(EADDRNOTAVAIL|EADDRINUSE).*no local port was free/,
  ],
  ['net.ipv4.ip_local_reserved_ports', '32768-60999', 'internal_error', /EADDRNOTAVAIL|EADDRINUSE/],
] as const;

/** A failed meshgate-validate as the kubelet reports it, on a pod the repair controller trusts. */
function failedPod(message: string) {
  return {
    metadata: { name: 'web-1', namespace: 'demo', labels: { 'meshgate.io/redirect': 'cni' } },
    spec: { nodeName: 'node-under-test' },
    status: {
      initContainerStatuses: [{ name: 'meshgate-validate', state: { terminated: { exitCode: 42, message } } }],
    },
  };
}

describe('sysctls that stop the probe, with a healthy redirect', () => {
  it.each(CASES)('%s=%s: %s, which is no evidence against the node', async (name, value, reason, detail) => {
    pod.install(istioRules(4));
    const ns = pod.topo().pod;
    const before = run('ip', ['netns', 'exec', ns, 'sysctl', '-n', name]).trim();
    run('ip', ['netns', 'exec', ns, 'sysctl', '-w', `${name}=${value}`]);
    try {
      const { run: r, podTx } = await pod.validate(['--timeout', '3s'], PROXY);
      const msg = expectFailure(r, reason);
      expect(msg.detail).toMatch(detail);
      expect(podTx).toBe(0);
      // The repair controller's decision on that very termination message: delete, never count.
      const d = decideRepair(
        failedPod(r.termination),
        { name: 'meshgate-validate', failures: VALIDATION_FAILURES.istio },
        { excludedNamespaces: [], keys: undefined },
      );
      expect(d).toMatchObject({ reason, counted: false });
      console.info(`${name}=${value}: ${reason} after ${msg.elapsedMs}ms (${String(msg.detail).slice(0, 100)}…)`);
    } finally {
      run('ip', ['netns', 'exec', ns, 'sysctl', '-w', `${name}=${before.replace(/\s+/g, ' ')}`]);
    }
  });

  it('the same redirect, without them: proven (the sysctls alone made it fail)', async () => {
    pod.install(istioRules(4));
    const { run: r } = await pod.validate([], PROXY);
    expect(r.code, r.stderr).toBe(0);
  });

  it('admission refuses each of these values', () => {
    for (const [name, value] of CASES) {
      const p = istioPod();
      p.spec.securityContext = { sysctls: [{ name, value }] } as never;
      expect(probeSysctlProblem(p, cfg('istio')), name).toBeDefined();
    }
  });
});
