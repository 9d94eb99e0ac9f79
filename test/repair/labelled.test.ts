/**
 * The labelled half of the unmeshed-pod sweep (src/repair/unmeshed/labelled.ts): pods carrying meshgate's label, as
 * the repair controller's pod watch delivers them. What it keeps of a flagged pod (a projection, never the pod), when
 * a pod leaves it (meshed by a later version, deleted), and which pods it does not judge at all (an admission mark
 * that verifies and no recorded refusal).
 */
import { describe, expect, it } from 'vitest';
import { LabelledUnmeshed } from '../../src/repair/unmeshed/labelled.ts';
import { keyRing, type KeyRing } from '../../src/mark/keys.ts';
import { issueMark } from '../../src/mark/mark.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { cfg, istioPod, pod } from '../policy/mutate/fixtures.ts';

const c = cfg('istio');
const OWNER = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-6d4f', uid: 'rs-1', controller: true };
const CREATED = '2026-05-01T10:00:00Z';

/** A pod of namespace shop carrying meshgate's label, running `base`'s containers. */
function labelledPod(name: string, base: Pod = pod(), o: { labels?: Record<string, string>; mark?: string } = {}) {
  return {
    ...base,
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      creationTimestamp: CREATED,
      labels: { 'meshgate.io/redirect': 'cni', app: 'web', ...o.labels },
      annotations: o.mark === undefined ? undefined : { 'meshgate.io/admitted': o.mark },
      ownerReferences: [OWNER],
    },
    status: { phase: 'Running' },
  };
}

describe('labelled pods judged from the pod watch', () => {
  it('a flagged pod is kept as its namespace, name, UID, labels and action: nothing of its spec', () => {
    const labelled = new LabelledUnmeshed(c);
    const p = labelledPod('copied', pod({ containers: [{ name: 'app', image: 'registry.example/app:unique-1' }] }));
    labelled.observe(p);
    const kept = [...labelled.flagged()];
    expect(kept).toHaveLength(1);
    expect(Object.keys(kept[0]!).sort()).toEqual(['action', 'labels', 'name', 'namespace', 'uid']);
    expect(kept[0]).toMatchObject({
      namespace: 'shop',
      name: 'copied',
      uid: 'uid-copied',
      labels: { 'meshgate.io/redirect': 'cni', app: 'web' },
      action: { action: 'evict', reason: 'proxy_missing' },
    });
    // No reference to the parsed pod survives in what is kept (the watch's object must be free to be collected).
    expect(JSON.stringify(kept)).not.toContain('unique-1');
    expect(JSON.stringify(kept)).not.toContain('ownerReferences');
    expect(labelled.stats).toEqual({ judged: 1, marked: 0 });
  });

  it('a pod judged meshed on a later event, or deleted, is dropped; one without a UID is ignored', () => {
    const labelled = new LabelledUnmeshed(c);
    labelled.observe(labelledPod('a'));
    labelled.observe(labelledPod('b'));
    expect([...labelled.flagged()].map((f) => f.name).sort()).toEqual(['a', 'b']);
    // A modified event whose pod now runs Istio's proxy and redirect (never true of a real pod, whose containers
    // are fixed: what matters is that the newest judgement replaces the old).
    labelled.observe(labelledPod('a', istioPod()));
    labelled.forget('uid-b');
    expect([...labelled.flagged()]).toEqual([]);
    const noUid = labelledPod('c');
    labelled.observe({ ...noUid, metadata: { ...noUid.metadata, uid: undefined } });
    expect([...labelled.flagged()]).toEqual([]);
    expect(labelled.stats).toEqual({ judged: 3, marked: 0 });
  });

  it('a pod whose admission mark verifies is not judged again, unless it carries a recorded refusal', () => {
    const ring = keyRing(Buffer.alloc(32, 1));
    const mark = issueMark(ring, 'shop', Date.parse(CREATED) / 1000);
    const labelled = new LabelledUnmeshed(c, () => ring);
    // Plain, unmeshed specs: judged, each would be flagged.
    labelled.observe(labelledPod('marked', pod(), { mark }));
    labelled.observe(labelledPod('recorded', pod(), { mark, labels: { 'meshgate.io/would-deny': 'proxy_missing' } }));
    labelled.observe(labelledPod('other-namespace-mark', pod(), { mark: issueMark(ring, 'elsewhere', 1) }));
    labelled.observe(labelledPod('no-mark'));
    expect(labelled.stats).toEqual({ judged: 3, marked: 1 });
    expect([...labelled.flagged()].map((f) => f.name).sort()).toEqual(['no-mark', 'other-namespace-mark', 'recorded']);
  });

  it('once the mark’s key is loaded, a flagged pod whose mark verifies is dropped on its next event', () => {
    const ring = keyRing(Buffer.alloc(32, 2));
    let keys: KeyRing | undefined;
    const labelled = new LabelledUnmeshed(c, () => keys);
    const p = labelledPod('early', pod(), { mark: issueMark(ring, 'shop', Date.parse(CREATED) / 1000) });
    labelled.observe(p);
    expect([...labelled.flagged()].map((f) => f.name)).toEqual(['early']);
    keys = ring;
    labelled.observe(p);
    expect([...labelled.flagged()]).toEqual([]);
    expect(labelled.stats).toEqual({ judged: 1, marked: 1 });
  });
});

describe('labelled pods on OpenShift (proxy.idsFrom: openshift)', () => {
  const ids = { uid: 1000659999, gid: 1000659999 };
  const openshift = cfg('istio', { proxy: { idsFrom: 'openshift' } });
  /** An Istio pod as istiod injects it in namespace shop: its proxy and istio-init's -u the range's last UID. */
  const injected = () => {
    const p = istioPod();
    const init = p.spec.initContainers!.find((x) => x.name === 'istio-init')!;
    init.args = init.args!.map((a, i, args) => (args[i - 1] === '-u' ? String(ids.uid) : a));
    const proxy = p.spec.containers.find((x) => x.name === 'istio-proxy')!;
    proxy.securityContext = { ...proxy.securityContext, runAsUser: ids.uid, runAsGroup: ids.gid };
    return labelledPod('web', p);
  };

  it("judges a pod with its namespace's proxy IDs: the injected pod is meshed", () => {
    const labelled = new LabelledUnmeshed(openshift, undefined, (ns) => (ns === 'shop' ? ids : undefined));
    labelled.observe(injected());
    expect(labelled.stats).toEqual({ judged: 1, marked: 0 });
    expect([...labelled.flagged()]).toEqual([]);
  });

  it('a pod of a namespace not seen yet is left for its next event, not judged with the configured IDs', () => {
    let known = false;
    const labelled = new LabelledUnmeshed(openshift, undefined, () => (known ? ids : undefined));
    labelled.observe(injected());
    expect(labelled.stats).toEqual({ judged: 0, marked: 0 });
    expect([...labelled.flagged()]).toEqual([]);
    // With the configured IDs it would be flagged (its proxy runs as another UID): why the namespace's are read.
    const plain = new LabelledUnmeshed(cfg('istio'));
    plain.observe(injected());
    expect([...plain.flagged()].map((f) => f.action.reason)).toEqual(['impostor_container']);
    known = true;
    labelled.observe(injected());
    expect(labelled.stats).toEqual({ judged: 1, marked: 0 });
  });
});
