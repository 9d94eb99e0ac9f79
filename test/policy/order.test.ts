/**
 * Issue 21 §2, order: in CNI mode the validation container runs before every other container of the pod (native
 * sidecars included); in init mode the mesh's init container runs where the mesh puts it (last, by Istio's and
 * Linkerd's design), or first with `redirect.beforeInitContainers`. The mutating webhook puts them there, also
 * when a later webhook prepended its own init container (reinvocation); the validating webhook refuses anything else.
 */
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/mutate/decide.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import { cfg, input, istio, istioPod, linkerd, linkerdPod, verified } from './mutate/fixtures.ts';

const userInit: Container = { name: 'migrate', image: 'flyway' };
const vaultInit: Container = { name: 'vault-agent-init', image: 'hashicorp/vault' };
const native = (c: Container): Container => ({ ...c, restartPolicy: 'Always' });
const inits = (p: Pod) => (p.spec.initContainers ?? []).map((c) => c.name);

/** The mutating webhook's patch applied to the pod (every op must apply as given). */
function mutated(p: Pod, c = cfg('istio')): Pod {
  const d = decide(input(p), verified, c);
  if (d.kind === 'deny') throw new Error(`denied: ${d.message}`);
  if (d.kind === 'skip') return p;
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(d.ops) as jsonpatch.Operation[], true, false)
    .newDocument;
}

/** Mutate, then mutate again as the apiserver's reinvocation does: the second pass must change nothing of the order. */
function settled(p: Pod, c = cfg('istio')): Pod {
  const once = mutated(p, c);
  const twice = mutated(once, c);
  expect(inits(twice)).toEqual(inits(once));
  return once;
}

describe('CNI mode: the validation container runs first', () => {
  const rows: Array<[string, Pod, 'istio' | 'linkerd', string[]]> = [
    [
      "Istio's order (istio-init last, after the user's init container): meshgate's validator goes first",
      istioPod({ nodeName: 'good', initContainers: [userInit, istio.init()] }),
      'istio',
      ['istio-validation', 'migrate'],
    ],
    [
      'a native-sidecar proxy: the validator still before it',
      istioPod({
        nodeName: 'good',
        initContainers: [native(istio.proxy()), userInit, istio.init()],
        containers: [{ name: 'app', image: 'nginx' }],
      }),
      'istio',
      ['istio-validation', 'istio-proxy', 'migrate'],
    ],
    [
      "Istio's own istio-validation (Istio CNI mode) behind another webhook's init container: moved first",
      istioPod({ nodeName: 'good', initContainers: [vaultInit, istio.validation()] }),
      'istio',
      ['istio-validation', 'vault-agent-init'],
    ],
    [
      "Linkerd's CNI-mode injection appends its validator after the user's init containers: moved first",
      linkerdPod({
        nodeName: 'good',
        initContainers: [userInit, cfg('linkerd').validator as Container],
      }),
      'linkerd',
      ['linkerd-network-validator', 'migrate'],
    ],
    [
      'linkerd-init last (classic proxy) is replaced by the validator, first',
      linkerdPod({ nodeName: 'good', initContainers: [userInit, linkerd.init()] }),
      'linkerd',
      ['linkerd-network-validator', 'migrate'],
    ],
  ];
  it.each(rows)('%s', (_n, p, mesh, want) => {
    const out = settled(p, cfg(mesh));
    expect(inits(out)).toEqual(want);
    expect(checkPosture(input(out), verified, cfg(mesh))).toMatchObject({ ok: true });
  });

  it('another webhook prepending an init container after meshgate: the reinvocation moves the validator back', () => {
    const once = mutated(istioPod({ nodeName: 'good' }));
    expect(inits(once)[0]).toBe('istio-validation');
    const afterVault = { ...once, spec: { ...once.spec, initContainers: [vaultInit, ...once.spec.initContainers!] } };
    expect(checkPosture(input(afterVault), verified, cfg('istio'))).toMatchObject({
      ok: false,
      reason: 'validator_not_first',
    });
    expect(inits(mutated(afterVault))).toEqual(['istio-validation', 'vault-agent-init']);
  });

  it('the validating webhook refuses a validator that is not first, naming what runs before it', () => {
    const p = istioPod({ nodeName: 'good', initContainers: [userInit, istio.validation()] });
    const r = checkPosture(input(p), verified, cfg('istio'));
    expect(r).toMatchObject({ ok: false, reason: 'validator_not_first' });
    expect(!r.ok && r.message).toMatch(/istio-validation runs after init container migrate/);
  });
});

describe('init mode: where the redirect is installed', () => {
  const unverifiedInit = (c = cfg('istio')) =>
    cfg('istio', { redirect: { mode: 'off', beforeInitContainers: c.config.redirect.beforeInitContainers } });
  const p = istioPod({ nodeName: 'good', initContainers: [userInit, istio.init()] });

  it('by default istio-init stays last, as Istio puts it (user init containers run before iptables)', () => {
    const c = unverifiedInit();
    expect(inits(settled(p, c))).toEqual(['migrate', 'istio-init']);
    expect(checkPosture(input(p), verified, c)).toMatchObject({ ok: true });
  });

  it('redirect.beforeInitContainers moves it first, and the validating webhook requires it there', () => {
    const c = cfg('istio', { redirect: { mode: 'off', beforeInitContainers: true } });
    const out = settled(p, c);
    expect(inits(out)).toEqual(['istio-init', 'migrate']);
    expect(checkPosture(input(out), verified, c)).toMatchObject({ ok: true });
    const r = checkPosture(input(p), verified, c);
    expect(r).toMatchObject({ ok: false, reason: 'redirect_not_first' });
    expect(!r.ok && r.message).toMatch(/istio-init runs after init container migrate/);
  });

  it('with the validator on an unverified node (onUnverifiedNode: validate): init first, then the validator', () => {
    const c = cfg('istio', { redirect: { onUnverifiedNode: 'validate', beforeInitContainers: true } });
    const bad = istioPod({ nodeName: 'bad', initContainers: [userInit, istio.init()] });
    expect(inits(settled(bad, c))).toEqual(['istio-init', 'istio-validation', 'migrate']);
  });
});

describe('mesh custom: meshgate injects the validator first, and keeps it there', () => {
  it('after another webhook prepended its init container, the reinvocation moves meshgate validator back', () => {
    const c = cfg('custom');
    const once = mutated(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'w', namespace: 'demo' },
        spec: { nodeName: 'good', containers: [{ name: 'app', image: 'nginx' }] },
      },
      c,
    );
    expect(inits(once)[0]).toBe('meshgate-validate');
    const afterVault = { ...once, spec: { ...once.spec, initContainers: [vaultInit, ...once.spec.initContainers!] } };
    expect(checkPosture(input(afterVault), verified, c)).toMatchObject({ ok: false, reason: 'validator_not_first' });
    const d = decide(input(afterVault), verified, c);
    expect(d).toMatchObject({ kind: 'patch', reason: 'validator_moved_first' });
    const fixed = mutated(afterVault, c);
    expect(inits(fixed).slice(0, 2)).toEqual(['meshgate-validate', 'vault-agent-init']);
    expect(checkPosture(input(fixed), verified, c)).toMatchObject({ ok: true });
    expect(decide(input(fixed), verified, c)).toMatchObject({ kind: 'skip', reason: 'already_injected' });
  });
});
