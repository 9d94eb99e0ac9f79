/**
 * The probe pod and its verdict: for each mesh, a pod the mesh's CNI plugin acts on (judged by meshgate's own mesh
 * profile, which mirrors what the plugins key on), running meshgate's validator exactly as meshgate injects it,
 * pinned to its node, with nothing a restricted namespace would refuse; and the probe's verdict from the status
 * its kubelet writes.
 */
import { describe, expect, it } from 'vitest';
import { VALIDATION_FAILURES } from '../../src/repair/failed/failures.ts';
import { buildProbePod, judgeProbe, probeName, probeTemplate } from '../../src/repair/quarantine/probe-pod.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { testConfig } from '../support/config.ts';
import { MESHES } from '../chart/profiles.ts';

describe('the probe pod', () => {
  it.each(MESHES)(
    'mesh %s: the CNI plugin acts on it, the validator is meshgate’s, nothing more is asked for',
    (mesh) => {
      const cfg = testConfig(mesh);
      const t = probeTemplate(cfg, { namespace: 'meshgate', activeDeadlineSeconds: 120 });
      const pod = buildProbePod(t, 'worker-1');
      const spec = pod.spec!;
      expect(cfg.profile.cniSkips(pod as unknown as Pod)).toBeUndefined();
      expect(spec.nodeName).toBe('worker-1');
      expect(spec.restartPolicy).toBe('Never');
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.volumes).toBeUndefined();
      expect(spec.activeDeadlineSeconds).toBe(120);
      expect(spec.initContainers!.map((c) => c.name)).toEqual([cfg.names.validator]);
      const { imagePullPolicy: _, ...validator } = spec.initContainers![0] as unknown as Record<string, unknown>;
      expect(validator).toEqual(cfg.validator);
      expect(spec.containers.map((c) => c.name)).toEqual([cfg.names.proxy]);
      const proxy = spec.containers[0];
      expect(proxy.securityContext).toMatchObject({
        runAsUser: cfg.config.proxy.uid,
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      for (const c of [...spec.initContainers!, ...spec.containers]) {
        expect(c.securityContext?.privileged).toBeUndefined();
        expect(c.securityContext?.capabilities?.add).toBeUndefined();
      }
      expect(pod.metadata!.labels!['meshgate.io/probe']).toBe('true');
      expect(pod.metadata!.annotations!['meshgate.io/probe-node']).toBe('worker-1');
      if (mesh === 'istio') {
        // istio-cni redirects only pods whose istio-proxy runs `proxy sidecar` and that carry the status annotation.
        expect(proxy.args!.slice(0, 2)).toEqual(['proxy', 'sidecar']);
        expect(JSON.parse(pod.metadata!.annotations!['sidecar.istio.io/status'])).toMatchObject({
          containers: ['istio-proxy'],
          initContainers: ['istio-validation'],
        });
      }
    },
  );

  it('images: the validator’s and a stand-in running Node.js by default; both configurable', () => {
    const cfg = testConfig('istio');
    const byDefault = buildProbePod(probeTemplate(cfg, { namespace: 'meshgate', activeDeadlineSeconds: 60 }), 'n');
    expect(byDefault.spec!.containers[0]).toMatchObject({
      image: cfg.validator.image,
      command: [cfg.config.validator.command[0], '-e', 'process.exit(0)'],
    });
    const custom = buildProbePod(
      probeTemplate(cfg, {
        namespace: 'probes',
        activeDeadlineSeconds: 60,
        validatorImage: 'local/meshgate:dev',
        proxyImage: 'local/proxyv2:standin',
      }),
      'n',
    );
    expect(custom.metadata!.namespace).toBe('probes');
    expect(custom.spec!.initContainers![0].image).toBe('local/meshgate:dev');
    expect(custom.spec!.containers[0].image).toBe('local/proxyv2:standin');
    expect(custom.spec!.containers[0].command).toBeUndefined(); // the stand-in's own entrypoint
  });

  it.each([
    ['worker-1', 'meshgate-probe-worker-1'],
    ['ip-10-0-1-23.eu-west-1.compute.internal', /^meshgate-probe-ip-10-0-1-23-eu-west-1-compute-[a-z]+-[0-9a-f]{10}$/],
    ['a'.repeat(200), /^meshgate-probe-a{36}-[0-9a-f]{10}$/],
  ])('name for node %s', (node, want) => {
    const name = probeName(node);
    expect(name.length).toBeLessThanOrEqual(63);
    if (typeof want === 'string') expect(name).toBe(want);
    else expect(name).toMatch(want);
  });
});

describe('judgeProbe', () => {
  const v = { name: 'istio-validation', failures: VALIDATION_FAILURES.istio };
  const init = (state: Record<string, unknown>) => ({ initContainerStatuses: [{ name: 'istio-validation', state }] });
  it.each([
    ['no status yet', 'running', undefined],
    ['validator running', 'running', init({ running: {} })],
    ['validator exited 0', 'passed', { phase: 'Running', ...init({ terminated: { exitCode: 0 } }) }],
    [
      'meshgate’s validator exited 42',
      'failed',
      init({ terminated: { exitCode: 42, message: '{"reason":"not_redirected","detail":"reached the probe"}' } }),
    ],
    [
      'Istio’s validation exited 126',
      'failed',
      init({ terminated: { exitCode: 126, message: 'iptables validation failed' } }),
    ],
    [
      'meshgate’s validator could not listen (42, listen_failed): could not check',
      'inconclusive',
      init({ terminated: { exitCode: 42, message: '{"reason":"listen_failed","detail":"EACCES"}' } }),
    ],
    [
      'meshgate’s validator failed on its own (42, internal_error): could not check',
      'inconclusive',
      init({ terminated: { exitCode: 42, message: '{"reason":"internal_error","detail":"x"}' } }),
    ],
    [
      'meshgate’s validator wrote no reason (42): proves nothing',
      'inconclusive',
      init({ terminated: { exitCode: 42 } }),
    ],
    ['OOM (137): not a redirect failure', 'inconclusive', init({ terminated: { exitCode: 137 } })],
    ['image cannot be pulled', 'inconclusive', init({ waiting: { reason: 'ImagePullBackOff', message: 'not found' } })],
    ['still pulling', 'running', init({ waiting: { reason: 'PodInitializing' } })],
    ['deadline exceeded before the validator ran', 'inconclusive', { phase: 'Failed', reason: 'DeadlineExceeded' }],
  ] as const)('%s → %s', (_n, state, status) => {
    expect(judgeProbe(status as never, v).state).toBe(state);
  });

  it('a failure carries the validator’s reason', () => {
    expect(
      judgeProbe(
        init({
          terminated: { exitCode: 42, message: '{"reason":"not_redirected","detail":"reached the probe"}' },
        }) as never,
        v,
      ),
    ).toEqual({ state: 'failed', reason: 'not_redirected', detail: 'reached the probe' });
  });
});
