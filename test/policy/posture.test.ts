/** The validating webhook's final posture: what every mutating webhook left must still be a meshed pod. */
import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import type { Pod } from '../../src/contract/pod.ts';
import type { Compiled } from '../../src/config/compile.ts';
import { cfg, facts, input, istio, istioPod, pinnedTo, pod, verified } from './mutate/fixtures.ts';
import { checkBinding, redirectNeed } from '../../src/policy/validate/binding.ts';

function mutated(p: Pod, c: Compiled, f = verified): Pod {
  const d = decide(input(p), f, c);
  if (d.kind !== 'patch') throw new Error(`expected a patch, got ${d.kind}`);
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(d.ops) as jsonpatch.Operation[], true, false)
    .newDocument;
}

describe('final posture', () => {
  const specs: Array<[string, Partial<Pod['spec']>]> = [
    ['unscheduled', {}],
    ['on a verified node', { nodeName: 'good' }],
    ['on an unverified node (validate)', { nodeName: 'bad' }],
    ['pinned by affinity to an unverified node (validate)', pinnedTo('bad')],
  ];
  const none = facts({ bad: { verified: false } });
  it.each(specs)('accepts what the mutating webhook produced, %s, for every profile and mode', (_n, spec) => {
    for (const mode of ['auto', 'required', 'off'] as const) {
      for (const [mesh, base] of [
        ['custom', pod(spec)],
        ['istio', istioPod(spec)],
      ] as const) {
        const c = cfg(mesh, { redirect: { mode, onUnverifiedNode: 'validate' } });
        for (const f of [verified, none]) {
          const d = decide(input(base), f, c);
          if (d.kind === 'deny') continue; // e.g. mode required with a bound, unverified node and no init to fall back to
          const out = d.kind === 'patch' ? mutated(base, c, f) : base;
          expect(checkPosture(input(out), f, c), `${mesh} ${mode}`).toMatchObject({ ok: true });
        }
      }
    }
  });

  it('denies a pod whose mutating webhook was skipped: no proxy (custom) / no Istio proxy (istio)', () => {
    expect(checkPosture(input(pod()), verified, cfg())).toMatchObject({
      ok: false,
      reason: 'proxy_missing',
      message: expect.stringMatching(/no meshgate \(custom templates\) proxy \(meshgate-proxy\)/),
    });
    expect(checkPosture(input(pod()), verified, cfg('istio'))).toMatchObject({
      ok: false,
      reason: 'proxy_missing',
      message: expect.stringMatching(/no Istio proxy \(istio-proxy\)/),
    });
  });

  it('denies a real proxy without any redirect', () => {
    const p = istioPod({ initContainers: [] });
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({ ok: false, reason: 'redirect_missing' });
  });

  it('denies meshgate status and label that lie about the containers', () => {
    const c = cfg();
    const out = mutated(pod({ nodeName: 'good' }), c);
    const gone = {
      ...out,
      spec: { ...out.spec, initContainers: out.spec.initContainers!.filter((x) => x.name !== 'meshgate-validate') },
    };
    expect(checkPosture(input(gone), verified, c)).toMatchObject({ ok: false, reason: 'redirect_missing' });
    const claims = structuredClone(out);
    claims.metadata!.annotations!['meshgate.io/status'] = claims.metadata!.annotations!['meshgate.io/status'].replace(
      '"mode":"cni"',
      '"mode":"init"',
    );
    expect(checkPosture(input(claims), verified, c)).toMatchObject({
      ok: false,
      reason: 'status_mismatch',
      message: expect.stringMatching(/claims init mode/),
    });
    const label = structuredClone(out);
    label.metadata!.labels!['meshgate.io/redirect'] = 'init';
    expect(checkPosture(input(label), verified, c)).toMatchObject({ ok: false, reason: 'status_mismatch' });
    const notJson = structuredClone(out);
    notJson.metadata!.annotations!['meshgate.io/status'] = '{';
    expect(checkPosture(input(notJson), verified, c)).toMatchObject({
      ok: false,
      reason: 'status_mismatch',
      message: expect.stringMatching(/not JSON/),
    });
  });

  it('a CNI-mode pod pre-bound to an unverified node: refused (reject) or warned (validate)', () => {
    const p = istioPod({ nodeName: 'bad', initContainers: [cfg('istio').validator as never] });
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({
      ok: false,
      reason: 'node_unverified',
      message: expect.stringMatching(/node bad has no verified CNI chain/),
    });
    const warned = checkPosture(input(p), verified, cfg('istio', { redirect: { onUnverifiedNode: 'validate' } }));
    expect(warned).toMatchObject({
      ok: true,
      warnings: [expect.stringMatching(/validation container will stop the pod/)],
    });
  });

  it('a pod pinned by affinity to an unverified node (reject): admitted in CNI mode, held to verified nodes', () => {
    for (const [mesh, base] of [
      ['custom', pod(pinnedTo('bad'))],
      ['istio', istioPod(pinnedTo('bad'))],
    ] as const) {
      const c = cfg(mesh);
      const out = mutated(base, c);
      expect(out.metadata?.labels?.['meshgate.io/redirect'], mesh).toBe('cni');
      expect(out.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, mesh).toEqual({
        nodeSelectorTerms: [
          {
            matchFields: [{ key: 'metadata.name', operator: 'In', values: ['bad'] }],
            matchExpressions: [{ key: 'meshgate.io/cni-verified', operator: 'In', values: ['true'] }],
          },
        ],
      });
      expect(checkPosture(input(out), verified, c), mesh).toMatchObject({
        ok: true,
        warnings: [
          expect.stringMatching(/node bad has no verified CNI chain .*stays Pending until the node is verified/),
        ],
      });
      // The scheduler cannot bind it before bad is verified; a Binding written by hand is refused all the same.
      const need = redirectNeed(out, 'demo', c);
      expect(need, mesh).toBe('cni');
      expect(checkBinding('demo/web', 'bad', need, verified), mesh).toMatchObject({
        ok: false,
        reason: 'binding_node_unverified',
      });
      // A later webhook that drops the requirement leaves a pod the scheduler could bind there: refused.
      const stripped = structuredClone(out);
      stripped.spec.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!
        .nodeSelectorTerms![0].matchExpressions = [];
      expect(checkPosture(input(stripped), verified, c), mesh).toMatchObject({
        ok: false,
        reason: 'node_unverified',
        message: expect.stringMatching(/its node bad has no verified CNI chain/),
      });
    }
  });

  it('a CNI-mode Istio pod istio-cni would skip (no sidecar.istio.io/status) is refused', () => {
    const p = pod({
      nodeName: 'good',
      initContainers: [istio.validation()],
      containers: [{ name: 'app' }, istio.proxy()],
    });
    expect(checkPosture(input(p), verified, cfg('istio'))).toMatchObject({
      ok: false,
      reason: 'mesh_cni_skips',
      message: expect.stringMatching(/no sidecar.istio.io\/status annotation/),
    });
  });

  it("Istio-injected pods pass as they are: init mode anywhere, Istio's own CNI validator on a verified node", () => {
    expect(checkPosture(input(istioPod({ nodeName: 'bad' })), verified, cfg('istio'))).toMatchObject({ ok: true });
    expect(
      checkPosture(input(istioPod({ nodeName: 'good', initContainers: [istio.validation()] })), verified, cfg('istio')),
    ).toMatchObject({ ok: true });
  });
});
