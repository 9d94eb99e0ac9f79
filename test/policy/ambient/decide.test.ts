/**
 * Istio ambient pods through the whole decision core (decide) and the validating webhook's posture check: which pods
 * are ambient (Istio 1.27's enrolment rules), what a pod author may not set, where the ambient validator goes, the
 * node choice without a fallback — each patch applied with fast-json-patch and decided again (idempotency).
 */
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { decide, type Decision } from '../../../src/policy/mutate/decide.ts';
import { checkPosture } from '../../../src/policy/posture.ts';
import { checkUpdate } from '../../../src/policy/validate/update.ts';
import type { Pod } from '../../../src/contract/pod.ts';
import type { PodInput } from '../../../src/policy/screen.ts';
import { cfg, facts, pinnedTo, pod, verified } from '../mutate/fixtures.ts';

const AMBIENT = cfg('istio', { ambient: { enabled: true } });
const OFF = cfg('istio');
const AMBIENT_NS = { 'istio.io/dataplane-mode': 'ambient' };

function ambientPod(meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}, spec = {}) {
  return pod(spec, { name: 'web', namespace: 'demo', ...meta });
}

const inNs = (p: Pod, labels: Record<string, string> | null = AMBIENT_NS): PodInput => ({
  pod: p,
  namespace: 'demo',
  namespaceLabels: labels ?? undefined,
});

function applied(p: Pod, d: Decision): Pod {
  if (d.kind !== 'patch') throw new Error(`expected a patch, got ${JSON.stringify(d)}`);
  const errors = jsonpatch.validate(d.ops, structuredClone(p));
  expect(errors, JSON.stringify(errors)).toBeUndefined();
  return jsonpatch.applyPatch(structuredClone(p), d.ops, true, false).newDocument as Pod;
}

describe('ambient enrolment (Istio 1.27 enablement selectors)', () => {
  it.each([
    ['namespace labelled ambient', ambientPod(), AMBIENT_NS, 'patch'],
    ['pod labelled ambient in an unlabelled namespace', ambientPod({ labels: AMBIENT_NS }), {}, 'patch'],
    [
      'pod labelled none in an ambient namespace (Istio opt-out)',
      ambientPod({ labels: { 'istio.io/dataplane-mode': 'none' } }),
      AMBIENT_NS,
      'not ambient',
    ],
    ['neither labelled', ambientPod(), {}, 'not ambient'],
  ])('%s', (_, p, ns, want) => {
    const d = decide(inNs(p, ns), verified, AMBIENT);
    if (want === 'patch')
      expect(d).toMatchObject({ kind: 'patch', reason: 'affinity_verified'.replace('affinity', 'ambient_affinity') });
    // Not ambient: the sidecar rules apply (Istio's injector has not run: no proxy yet).
    else expect(d).toEqual({ kind: 'skip', reason: 'no_proxy_yet' });
  });

  it('with ambient disabled in meshgate the pod is judged as a sidecar pod', () => {
    expect(decide(inNs(ambientPod()), verified, OFF)).toEqual({ kind: 'skip', reason: 'no_proxy_yet' });
  });

  it('namespace labels unknown (cache not synced): refused, never guessed', () => {
    expect(decide(inNs(ambientPod(), null), verified, AMBIENT)).toMatchObject({
      kind: 'deny',
      reason: 'ambient_namespace_unknown',
    });
    // A pod-level selector decides without them.
    expect(decide(inNs(ambientPod({ labels: AMBIENT_NS }), null), verified, AMBIENT).kind).toBe('patch');
  });
});

describe('what an ambient pod author may not set', () => {
  it.each([
    [{ 'sidecar.istio.io/status': '{}' }, 'ambient_status_preset'],
    [{ 'ambient.istio.io/redirection': 'enabled' }, 'ambient_redirection_preset'],
    [{ 'ambient.istio.io/dns-capture': 'false' }, 'ambient_dns_capture_off'],
    [{ 'ambient.istio.io/bypass-inbound-capture': 'true' }, 'ambient_inbound_bypass'],
  ])('%j: %s, at admission and in the posture check', (annotations, reason) => {
    const d = decide(inNs(ambientPod({ annotations })), verified, AMBIENT);
    expect(d).toMatchObject({ kind: 'deny', reason });
    expect(checkPosture(inNs(ambientPod({ annotations })), verified, AMBIENT)).toMatchObject({ ok: false, reason });
  });

  it('DNS capture off cluster-wide: only pods that turn it back on pass', () => {
    const noDns = cfg('istio', { ambient: { enabled: true, dnsCapture: false } });
    expect(decide(inNs(ambientPod()), verified, noDns)).toMatchObject({ reason: 'ambient_dns_capture_off' });
    const on = ambientPod({ annotations: { 'ambient.istio.io/dns-capture': 'true' } });
    expect(decide(inNs(on), verified, noDns).kind).toBe('patch');
  });
});

describe('the ambient validator and the node', () => {
  it('unbound pod: the ambient validator first, pinned to verified nodes; idempotent; the posture check passes', () => {
    const p = ambientPod({}, { initContainers: [{ name: 'setup', image: 'busybox' }] });
    const d = decide(inNs(p), verified, AMBIENT);
    const out = applied(p, d);
    expect(out.spec.initContainers?.map((c) => c.name)).toEqual(['istio-validation', 'setup']);
    expect(out.spec.initContainers?.[0].args).toEqual(['--ambient', '--timeout=10s']);
    expect(out.spec.initContainers?.[0].securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
    });
    expect(JSON.stringify(out.spec.affinity)).toContain('meshgate.io/cni-verified');
    expect(out.metadata?.labels?.['meshgate.io/redirect']).toBe('cni');
    expect(decide(inNs(out), verified, AMBIENT)).toEqual({ kind: 'skip', reason: 'already_injected' });
    expect(checkPosture(inNs(out), verified, AMBIENT)).toMatchObject({ ok: true, reason: 'ok' });
  });

  it('bound to a verified node: no affinity; to an unverified one: refused (no fallback, whatever onUnverifiedNode)', () => {
    const good = applied(
      ambientPod({}, { nodeName: 'good' }),
      decide(inNs(ambientPod({}, { nodeName: 'good' })), verified, AMBIENT),
    );
    expect(good.spec.affinity).toBeUndefined();
    expect(decide(inNs(ambientPod({}, { nodeName: 'bad' })), verified, AMBIENT)).toMatchObject({
      kind: 'deny',
      reason: 'node_unverified',
    });
    const validate = cfg('istio', { ambient: { enabled: true }, redirect: { onUnverifiedNode: 'validate' } });
    expect(decide(inNs(ambientPod({}, { nodeName: 'bad' })), verified, validate)).toMatchObject({
      kind: 'deny',
      reason: 'ambient_no_fallback',
    });
  });

  it('no verified node anywhere: still pinned (Pending, visibly), never unguarded', () => {
    const none = facts({ bad: { verified: false } });
    const d = decide(inNs(ambientPod()), none, AMBIENT);
    expect(d).toMatchObject({ kind: 'patch', reason: 'ambient_affinity_verified' });
    expect(JSON.stringify(applied(ambientPod(), d).spec.affinity)).toContain('meshgate.io/cni-verified');
  });

  it('a DaemonSet pod pinned to an unverified node waits for it, as sidecar pods do', () => {
    expect(decide(inNs(ambientPod({}, pinnedTo('bad'))), verified, AMBIENT)).toMatchObject({
      kind: 'patch',
      reason: 'node_unverified_wait',
    });
  });

  it('at audit (hold: false): the validator on a verified node; elsewhere left to istio-cni as it is, never pinned or refused', () => {
    const audit = { hold: false };
    const good = decide(inNs(ambientPod({}, { nodeName: 'good' })), verified, AMBIENT, audit);
    expect(good).toMatchObject({ kind: 'patch', reason: 'ambient_node_verified' });
    for (const spec of [{}, { nodeName: 'bad' }, pinnedTo('bad')])
      expect(decide(inNs(ambientPod({}, spec)), verified, AMBIENT, audit)).toEqual({
        kind: 'skip',
        reason: 'audit_unpinned',
      });
  });

  it('another webhook prepended an init container: the validator is moved back first', () => {
    const p = ambientPod();
    const out = applied(p, decide(inNs(p), verified, AMBIENT));
    const pushed: Pod = {
      ...out,
      spec: { ...out.spec, initContainers: [{ name: 'other', image: 'busybox' }, ...(out.spec.initContainers ?? [])] },
    };
    expect(checkPosture(inNs(pushed), verified, AMBIENT)).toMatchObject({ ok: false, reason: 'validator_not_first' });
    const moved = applied(pushed, decide(inNs(pushed), verified, AMBIENT));
    expect(moved.spec.initContainers?.map((c) => c.name)).toEqual(['istio-validation', 'other']);
  });

  it('posture: an ambient pod without the validator (mutating webhook skipped) is refused', () => {
    expect(checkPosture(inNs(ambientPod()), verified, AMBIENT)).toMatchObject({
      ok: false,
      reason: 'ambient_validator_missing',
    });
  });

  it('a hand-written look-alike of the ambient validator is an impostor', () => {
    const p = ambientPod();
    const out = applied(p, decide(inNs(p), verified, AMBIENT));
    const forged = structuredClone(out);
    forged.spec.initContainers![0].args = ['--ambient', '--timeout=1s', '--probe-address=127.0.0.1:53'];
    expect(decide(inNs(forged), verified, AMBIENT)).toMatchObject({ kind: 'deny', reason: 'impostor_container' });
  });
});

describe('updates of an admitted ambient pod', () => {
  const admitted = () => {
    const p = ambientPod();
    return applied(p, decide(inNs(p), verified, AMBIENT));
  };
  const update = (old: Pod, next: Pod) => checkUpdate(old, next, 'demo', undefined, verified, AMBIENT, AMBIENT_NS);

  it("istio-cni's own ambient.istio.io/redirection on a running pod does not block later updates", () => {
    const enrolled = admitted();
    enrolled.metadata!.annotations = { ...enrolled.metadata!.annotations, 'ambient.istio.io/redirection': 'enabled' };
    const relabelled = structuredClone(enrolled);
    relabelled.metadata!.labels = { ...relabelled.metadata!.labels, team: 'a' };
    expect(update(enrolled, relabelled)).toEqual({ ok: true, reason: 'ok' });
  });

  it('an update that adds bypass-inbound-capture or removes the validator is refused', () => {
    const pod = admitted();
    const bypass = structuredClone(pod);
    bypass.metadata!.annotations = {
      ...bypass.metadata!.annotations,
      'ambient.istio.io/bypass-inbound-capture': 'true',
    };
    expect(update(pod, bypass)).toMatchObject({ ok: false, reason: 'ambient_inbound_bypass' });
    const stripped = structuredClone(pod);
    stripped.spec.initContainers = [];
    expect(update(pod, stripped)).toMatchObject({ ok: false, reason: 'mesh_container_changed' });
  });
});

/**
 * Issue 33 §8: an UPDATE of an existing pod may not set, change or remove ambient.istio.io/redirection — istio-cni's
 * record that ztunnel captures the pod — unless it comes from istio-cni's node agent (ambient.cniServiceAccount)
 * with a token bound to a pod on the pod's own node.
 */
describe('who may change ambient.istio.io/redirection on an existing pod', () => {
  const REDIRECTION = 'ambient.istio.io/redirection';
  const CNI = 'system:serviceaccount:istio-system:istio-cni';
  const running = (value?: string) => {
    const p = ambientPod({}, { nodeName: 'good' });
    const a = applied(p, decide(inNs(p), verified, AMBIENT));
    if (value !== undefined) a.metadata!.annotations = { ...a.metadata!.annotations, [REDIRECTION]: value };
    return a;
  };
  const withValue = (p: Pod, value: string | undefined) => {
    const next = structuredClone(p);
    const annotations = { ...next.metadata!.annotations };
    if (value === undefined) delete annotations[REDIRECTION];
    else annotations[REDIRECTION] = value;
    next.metadata!.annotations = annotations;
    return next;
  };
  const as = (old: Pod, next: Pod, who?: string, node?: string, c = AMBIENT) =>
    checkUpdate(old, next, 'demo', who, verified, c, AMBIENT_NS, node);

  it.each<[string, string | undefined, string | undefined, string | undefined, string | undefined, RegExp]>([
    [
      'the pod author sets it',
      undefined,
      'enabled',
      'alice',
      undefined,
      /\(null → "enabled"\).*alice is not istio-cni/,
    ],
    ['the pod author removes it', 'enabled', undefined, 'alice', undefined, /\("enabled" → null\)/],
    ['the pod author changes it', 'pending', 'enabled', 'alice', undefined, /\("pending" → "enabled"\)/],
    [
      "istio-cni's account with a token of another node",
      undefined,
      'enabled',
      CNI,
      'other',
      /token is bound to node other, not the pod's node good/,
    ],
    ["istio-cni's account with a token bound to no node", 'enabled', undefined, CNI, undefined, /bound to no node/],
    [
      'another namespace’s account of the same name',
      undefined,
      'enabled',
      'system:serviceaccount:default:istio-cni',
      'good',
      /is not istio-cni \(system:serviceaccount:istio-system:istio-cni\)/,
    ],
  ])('%s: refused (ambient_redirection_changed)', (_n, was, is, who, node, message) => {
    const r = as(running(was), withValue(running(was), is), who, node);
    expect(r).toMatchObject({ ok: false, reason: 'ambient_redirection_changed' });
    expect(!r.ok && r.message).toMatch(message);
  });

  it.each<[string, string | undefined, string | undefined]>([
    ['enrols the pod', undefined, 'enabled'],
    ['marks it half done', undefined, 'pending'],
    ['takes it out of the mesh', 'enabled', undefined],
  ])("istio-cni's node agent on the pod's node %s: admitted", (_n, was, is) => {
    expect(as(running(was), withValue(running(was), is), CNI, 'good')).toEqual({ ok: true, reason: 'ok' });
  });

  it('the account is configurable (ambient.cniServiceAccount), e.g. istio-cni installed in kube-system', () => {
    const c = cfg('istio', { ambient: { enabled: true, cniServiceAccount: 'kube-system/istio-cni' } });
    const [old, next] = [running(), withValue(running(), 'enabled')];
    expect(as(old, next, 'system:serviceaccount:kube-system:istio-cni', 'good', c)).toEqual({ ok: true, reason: 'ok' });
    expect(as(old, next, CNI, 'good', c)).toMatchObject({ ok: false, reason: 'ambient_redirection_changed' });
  });

  it('holds on any pod of a guarded namespace, ambient or not, and with meshgate’s ambient mode off', () => {
    const sidecar = pod({ nodeName: 'good' }, { name: 'plain', namespace: 'demo' });
    expect(
      checkUpdate(sidecar, withValue(sidecar, 'enabled'), 'demo', 'alice', verified, OFF, undefined, undefined),
    ).toMatchObject({ ok: false, reason: 'ambient_redirection_changed' });
  });
});
