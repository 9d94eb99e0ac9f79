/**
 * Istio on OpenShift (issue 31 §1): istiod runs each namespace's proxy as the last UID of the namespace's range
 * (src/mesh/istio-openshift.ts). With `proxy.idsFrom: openshift`, meshgate judges a namespace's pods, and runs its
 * validator, with that namespace's IDs: the real proxy passes, a container running as the range's last UID is the
 * proxy's identity there, and 1337 is an ordinary UID.
 */
import { describe, expect, it } from 'vitest';
import { configForNamespace, MAX_ID_VARIANTS, withProxyIds } from '../../src/config/per-namespace.ts';
import { mutate } from '../../src/admission/mutate.ts';
import { validate } from '../../src/admission/validate.ts';
import type { AdmissionRequest } from '../../src/admission/review.ts';
import { checkPosture } from '../../src/policy/posture.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import type { Container, Pod } from '../../src/contract/pod.ts';
import { cfg, input, verified } from '../policy/mutate/fixtures.ts';
import { corpusPod } from '../support/corpus.ts';

const OPENSHIFT = { uid: 1000659999, gid: 1000659999 };
const base = () => cfg('istio', { proxy: { idsFrom: 'openshift' } });

/** Istio's hello.yaml as istiod 1.27 injects it on OpenShift: istio-init -u and istio-proxy's IDs the range's last. */
function openshiftPod(): Pod {
  const p = corpusPod('istio__hello.yaml.injected') as unknown as Pod;
  p.metadata = { ...p.metadata, name: 'hello', namespace: 'shop' };
  p.spec.nodeName = 'good';
  const all = [...(p.spec.initContainers ?? []), ...p.spec.containers];
  const init = all.find((c) => c.name === 'istio-init')!;
  init.args = init.args!.map((a, i, args) => (args[i - 1] === '-u' ? String(OPENSHIFT.uid) : a));
  const proxy = all.find((c) => c.name === 'istio-proxy')!;
  proxy.securityContext = { ...proxy.securityContext, runAsUser: OPENSHIFT.uid, runAsGroup: OPENSHIFT.gid };
  return p;
}
const app = (p: Pod): Container => p.spec.containers.find((c) => c.name !== 'istio-proxy')!;

describe('the configuration a namespace is judged with', () => {
  it("is the namespace's IDs, for the proxy and for a loopback validator", () => {
    const c = withProxyIds(base(), OPENSHIFT);
    expect(c.identity).toMatchObject({ proxyUid: OPENSHIFT.uid, proxyGid: OPENSHIFT.gid });
    expect(c.validator.securityContext).toMatchObject({ runAsUser: OPENSHIFT.uid, runAsGroup: OPENSHIFT.gid });
  });

  it('is compiled once per pair, and is the configuration itself for the configured IDs', () => {
    const b = base();
    expect(withProxyIds(b, OPENSHIFT)).toBe(withProxyIds(b, { ...OPENSHIFT }));
    expect(withProxyIds(b, { uid: 1337, gid: 1337 })).toBe(b);
  });

  it(`keeps at most ${MAX_ID_VARIANTS} pairs per configuration`, () => {
    const b = base();
    const first = withProxyIds(b, { uid: 5000, gid: 5000 });
    for (let i = 1; i <= MAX_ID_VARIANTS; i++) withProxyIds(b, { uid: 5000 + i, gid: 5000 + i });
    expect(withProxyIds(b, { uid: 5000, gid: 5000 })).not.toBe(first); // dropped, compiled again
  });

  it('is unknown while the cache has not seen the namespace, and unchanged without idsFrom openshift', () => {
    expect(configForNamespace(base(), 'shop', () => undefined)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/does not know namespace shop yet/),
    });
    const plain = cfg('istio');
    expect(configForNamespace(plain, 'shop', () => undefined)).toEqual({ ok: true, cfg: plain });
  });
});

describe('an OpenShift-injected pod', () => {
  const judged = (p: Pod, c = withProxyIds(base(), OPENSHIFT)) => ({
    posture: checkPosture(input(p, 'shop'), verified, c),
    decision: decide(input(p, 'shop'), verified, c),
  });

  it("passes with its namespace's IDs (istiod's output as it is)", () => {
    const { posture, decision } = judged(openshiftPod());
    expect(posture.ok ? 'ok' : `${posture.reason}: ${posture.message}`).toBe('ok');
    expect(decision.kind).toBe('patch');
  });

  it('was refused with the fixed 1337: what meshgate did before', () => {
    const { posture } = judged(openshiftPod(), cfg('istio'));
    expect(posture).toMatchObject({ ok: false, reason: 'impostor_container' });
  });

  it("gets meshgate's validator running as the namespace's proxy UID (Istio's loopback probe needs it)", () => {
    const { decision } = judged(openshiftPod());
    const ops = decision.kind === 'patch' ? decision.ops : [];
    const added = ops.find((o) => o.op === 'add' && /initContainers\/0$/.test(o.path));
    const value = added && 'value' in added ? (added.value as Container) : undefined;
    expect(value?.securityContext).toMatchObject({ runAsUser: OPENSHIFT.uid });
  });

  it("refuses an app running as the namespace's proxy UID, admits one running as 1337", () => {
    const p = openshiftPod();
    app(p).securityContext = { runAsUser: OPENSHIFT.uid };
    expect(judged(p).posture).toMatchObject({ ok: false, reason: 'proxy_identity' });
    app(p).securityContext = { runAsUser: 1337, runAsGroup: 1337 };
    expect(judged(p).posture).toMatchObject({ ok: true });
  });
});

describe('the webhooks read the IDs from the namespace cache', () => {
  const review = (p: Pod): AdmissionRequest =>
    ({
      uid: 'u',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CREATE',
      namespace: 'shop',
      object: p,
    }) as AdmissionRequest;
  const deps = (known: boolean) => ({
    config: base(),
    nodes: verified,
    namespaces: { get: () => undefined, proxyIds: () => (known ? OPENSHIFT : undefined) },
  });

  it('admits the injected pod once the namespace is known', async () => {
    expect(mutate(review(openshiftPod()), deps(true))).toMatchObject({ kind: 'patch' });
    expect(await validate(review(openshiftPod()), deps(true))).toMatchObject({ kind: 'allow' });
  });

  it('refuses, retryably, while it is not', async () => {
    expect(mutate(review(openshiftPod()), deps(false))).toMatchObject({ kind: 'deny', reason: 'proxy_ids_unknown' });
    expect(await validate(review(openshiftPod()), deps(false))).toMatchObject({
      kind: 'deny',
      reason: 'proxy_ids_unknown',
    });
  });
});
