/**
 * meshgate through a real kube-apiserver: TLS with a caBundle, namespaceSelector, reinvocation, the
 * ReplicaSet controller, the real scheduler, kwok nodes, PodSecurity admission, failurePolicy.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { AppsV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { waitForPodsRunning } from './harness/index.ts';
import {
  apiError,
  createNamespace,
  mutateCalls,
  mutateVerdicts,
  names,
  restrictedPod,
  startMeshgate,
} from './meshgate.ts';
import { shared } from './harness/shared.ts';
import { startGuardedCluster, VERIFIED_AND_NOT } from './harness/clusters.ts';
import { deployment } from './workloads.ts';

/** The cluster this file's tests share: a verified and an unverified node, meshgate injecting its own templates. */
const s = shared(async (stopLater) => {
  const cluster = await startGuardedCluster(stopLater, VERIFIED_AND_NOT);
  await createNamespace(cluster.cp, 'mesh', { 'meshgate.io/inject': 'enabled' });
  await createNamespace(cluster.cp, 'plain');
  await createNamespace(cluster.cp, 'strict', {
    'meshgate.io/inject': 'enabled',
    'pod-security.kubernetes.io/enforce': 'restricted',
  });
  return cluster;
});

describe('injection through the real apiserver', () => {
  it('Deployment pods come out of the ReplicaSet controller injected, are scheduled onto the verified node and Running', async () => {
    await s.cp.kc
      .makeApiClient(AppsV1Api)
      .createNamespacedDeployment({ namespace: 'mesh', body: deployment('web', restrictedPod('web').spec, 3) });
    const pods = await waitForPodsRunning(s.cp.kc, 'mesh', 'app=web', 3, { timeoutMs: 90_000 });
    for (const p of pods) {
      expect(names(p).init).toEqual(['meshgate-validate', 'meshgate-proxy']);
      expect(p.spec!.nodeName).toBe('node-verified');
      expect(p.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
      expect(JSON.parse(p.metadata!.annotations!['meshgate.io/status'])).toMatchObject({
        mode: 'cni',
        reason: 'affinity_verified',
        nativeSidecar: true,
      });
    }
    // The apiserver called us for the pods (by the ReplicaSet controller) and for their bindings (by the scheduler).
    const users = s.mg.reviews.map(
      (r) => (r.body as { request: { userInfo: { username: string } } }).request.userInfo.username,
    );
    expect(users).toContain('system:serviceaccount:kube-system:replicaset-controller');
    expect(
      s.mg.reviews.some((r) => (r.body as { request: { subResource?: string } }).request.subResource === 'binding'),
    ).toBe(true);
  });

  it('leaves pods in an unlabelled namespace untouched (the webhook is never even called)', async () => {
    const before = s.mg.reviews.length;
    await s.cp.kc
      .makeApiClient(AppsV1Api)
      .createNamespacedDeployment({ namespace: 'plain', body: deployment('plain', restrictedPod('plain').spec) });
    const [p] = await waitForPodsRunning(s.cp.kc, 'plain', 'app=plain', 1, { timeoutMs: 60_000 });
    expect(names(p)).toEqual({ init: [], containers: ['app'] });
    expect(s.mg.reviews.slice(before).filter((r) => JSON.stringify(r.body).includes('"namespace":"plain"'))).toEqual(
      [],
    );
  });

  it('--dry-run=server creates get the same mutation and persist nothing', async () => {
    const dry = await s.core.createNamespacedPod({ namespace: 'mesh', body: restrictedPod('dry'), dryRun: 'All' });
    expect(names(dry).init).toEqual(['meshgate-validate', 'meshgate-proxy']);
    const dryReview = s.mg.reviews.findLast((r) => r.route === 'mutate');
    expect((dryReview!.body as { request: { dryRun: boolean } }).request.dryRun).toBe(true);
    await expect(s.core.readNamespacedPod({ namespace: 'mesh', name: 'dry' })).rejects.toThrow();
    const real = await s.core.createNamespacedPod({ namespace: 'mesh', body: restrictedPod('real') });
    expect(names(real)).toEqual(names(dry));
    expect(real.spec!.affinity).toEqual(dry.spec!.affinity);
  });
});

describe('pod opt-in by label where the namespace is not labelled', () => {
  it('injects labelled pods in allowed namespaces only; unlabelled pods and other namespaces are untouched', async () => {
    await createNamespace(s.cp, 'team-a', { team: 'a' });
    await createNamespace(s.cp, 'team-b', { team: 'b' });
    const optIn = await startMeshgate(s.cp, { injection: { podOptInNamespaceLabels: { team: 'a' } } });
    try {
      await optIn.register({ optIn: { team: 'a' } });
      const labelled = (name: string) => {
        const p = restrictedPod(name);
        p.metadata!.labels!['meshgate.io/inject'] = 'true';
        return p;
      };
      expect(names(await s.core.createNamespacedPod({ namespace: 'team-a', body: labelled('in') })).init).toEqual([
        'meshgate-validate',
        'meshgate-proxy',
      ]);
      expect(
        names(await s.core.createNamespacedPod({ namespace: 'team-a', body: restrictedPod('not-labelled') })),
      ).toEqual({ init: [], containers: ['app'] });
      expect(names(await s.core.createNamespacedPod({ namespace: 'team-b', body: labelled('other-team') }))).toEqual({
        init: [],
        containers: ['app'],
      });
    } finally {
      await optIn.stop();
      await s.mg.register();
    }
  });
});

describe('node verdicts', () => {
  it('rejects a pod created with spec.nodeName of an unverified node, naming the node', async () => {
    const err = await s.core
      .createNamespacedPod({ namespace: 'mesh', body: restrictedPod('pinned-bad', { nodeName: 'node-unverified' }) })
      .catch((e) => e);
    expect(apiError(err)).toMatch(
      /denied the request: meshgate: node node-unverified has no verified CNI chain .*\[node_unverified\]/,
    );
  });

  it('admits a pod pinned to the verified node in CNI mode without affinity', async () => {
    const p = await s.core.createNamespacedPod({
      namespace: 'mesh',
      body: restrictedPod('pinned-good', { nodeName: 'node-verified' }),
    });
    expect(names(p).init).toEqual(['meshgate-validate', 'meshgate-proxy']);
    expect(p.spec!.affinity).toBeUndefined();
  });

  it('with onUnverifiedNode=validate admits it in init mode with the validator', async () => {
    const alt = await startMeshgate(s.cp, { redirect: { onUnverifiedNode: 'validate' } });
    try {
      await alt.register();
      const p = await s.core.createNamespacedPod({
        namespace: 'mesh',
        body: restrictedPod('pinned-validate', { nodeName: 'node-unverified' }),
      });
      expect(names(p).init).toEqual(['meshgate-init', 'meshgate-validate', 'meshgate-proxy']);
      expect(p.metadata!.labels!['meshgate.io/redirect']).toBe('init');
    } finally {
      await alt.stop();
      await s.mg.register();
    }
  });
});

describe('Pod Security restricted', () => {
  it('admits a CNI-mode pod: meshgate added no privileged container', async () => {
    const p = await s.core.createNamespacedPod({ namespace: 'strict', body: restrictedPod('cni-ok') });
    expect(names(p).init).toEqual(['meshgate-validate', 'meshgate-proxy']);
  });

  it('refuses an init-mode pod (NET_ADMIN/NET_RAW), proving CNI mode really removes the privilege', async () => {
    const off = await startMeshgate(s.cp, { redirect: { mode: 'off' } });
    try {
      await off.register();
      const err = await s.core
        .createNamespacedPod({ namespace: 'strict', body: restrictedPod('init-refused') })
        .catch((e) => e);
      const message = apiError(err);
      expect(message).toMatch(/violates PodSecurity "restricted:latest"/);
      expect(message).toMatch(/meshgate-init/);
      expect(message).toMatch(/NET_ADMIN/);
    } finally {
      await off.stop();
      await s.mg.register();
    }
  });
});

describe('reinvocation: one mutate call per pod create', () => {
  const tokenMounts = (p: V1Pod) =>
    [...(p.spec!.initContainers ?? []), ...p.spec!.containers].map((c) => [
      c.name,
      (c.volumeMounts ?? [])
        .filter((m) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount')
        .map((m) => m.name.replace(/-[a-z0-9]{5}$/, '-*')),
    ]);

  it("meshgate's patch holds the ServiceAccount token mounts, so the plugin's re-run changes nothing and meshgate is called once", async () => {
    const before = s.mg.reviews.length;
    const p = await s.core.createNamespacedPod({ namespace: 'mesh', body: restrictedPod('called-once') });
    // Twice before meshgate added the mounts itself: the re-run added them and the apiserver called meshgate again.
    expect(mutateCalls(s.mg, before, 'called-once')).toEqual(['affinity_verified']);
    expect(tokenMounts(p)).toEqual([
      ['meshgate-validate', ['kube-api-access-*']],
      ['meshgate-proxy', ['kube-api-access-*']],
      ['app', ['kube-api-access-*']],
    ]);
  });

  it('with automount off there is nothing to add: no mount, one call', async () => {
    const before = s.mg.reviews.length;
    const p = await s.core.createNamespacedPod({
      namespace: 'mesh',
      body: restrictedPod('no-automount', { automountServiceAccountToken: false }),
    });
    expect(mutateCalls(s.mg, before, 'no-automount')).toEqual(['affinity_verified']);
    expect(tokenMounts(p)).toEqual([
      ['meshgate-validate', []],
      ['meshgate-proxy', []],
      ['app', []],
    ]);
  });
});

describe('reinvocation: the real AdmissionReviews of shared/corpus/admission, created through the apiserver', () => {
  const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
  const corpus = new URL('../../../shared/corpus/admission/', import.meta.url);
  const pods = readdirSync(corpus)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ file: f, review: JSON.parse(readFileSync(new URL(f, corpus), 'utf8')) }))
    .filter(({ review }) => review.request?.kind?.kind === 'Pod' && review.request.operation === 'CREATE');

  /**
   * Every container already mounts its own (non-projected) token at the token path, e.g. a pre-1.24 secret: the
   * ServiceAccount plugin added no kube-api-access volume for meshgate to name, so on its re-run it adds one for
   * meshgate's containers, and the apiserver calls meshgate a second time (README: known gaps).
   */
  const ownTokenEverywhere = (p: V1Pod) =>
    p.spec!.automountServiceAccountToken !== false &&
    !(p.spec!.volumes ?? []).some((v) => v.name.startsWith('kube-api-access-')) &&
    [...(p.spec!.initContainers ?? []), ...p.spec!.containers].every((c) =>
      (c.volumeMounts ?? []).some((m) => m.mountPath === TOKEN_PATH),
    );

  it('each pod meshgate patches costs one mutate call, but for pods that mount their own token everywhere', async () => {
    const calls: Record<string, { expected: number; got: string[] }> = {};
    for (const [i, { file, review }] of pods.entries()) {
      const original = review.request.object as V1Pod;
      // Each container made unable to become the proxy (apps.privileges: restricted): the case is about reinvocation.
      const harden = (c: V1Container) => ({
        ...c,
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, ...c.securityContext },
      });
      const spec: Record<string, unknown> = {
        ...original.spec,
        securityContext: { runAsUser: 1000, runAsGroup: 1000, ...original.spec?.securityContext },
        containers: original.spec!.containers.map(harden),
        ...(original.spec?.initContainers ? { initContainers: original.spec.initContainers.map(harden) } : {}),
      };
      // Creatable here: no node (meshgate pins the pod), no objects this cluster lacks.
      for (const k of ['nodeName', 'serviceAccountName', 'serviceAccount', 'priorityClassName', 'priority'])
        delete spec[k];
      const name = `corpus-${i}`;
      const before = s.mg.reviews.length;
      const body = {
        metadata: { name, labels: original.metadata?.labels, annotations: original.metadata?.annotations },
        spec,
      };
      await s.core.createNamespacedPod({ namespace: 'mesh', body: body as unknown as V1Pod }).catch(() => undefined);
      const verdicts = mutateVerdicts(s.mg, before, name);
      if (verdicts[0]?.kind !== 'patch') continue;
      calls[file] = { expected: ownTokenEverywhere(original) ? 2 : 1, got: verdicts.map((v) => v.reason) };
    }
    const expected = Object.values(calls).map((c) => c.expected);
    // Both kinds are in the corpus (chainguard's pods name their kube-api-access volume; a kubewarden pod mounts a
    // secret token in every container), so the test holds meshgate to each.
    expect(expected.filter((n) => n === 1).length, JSON.stringify(calls)).toBeGreaterThanOrEqual(2);
    expect(expected, JSON.stringify(calls)).toContain(2);
    for (const [file, c] of Object.entries(calls))
      expect(c.got.length, `${file}: ${c.got.join(', ')}`).toBe(c.expected);
  });
});

describe('captured AdmissionReviews', () => {
  it('records real pods CREATE and pods/binding CREATE bodies as fixtures (CAPTURE=1 rewrites them)', () => {
    const podCreate = s.mg.reviews.find(
      (r) => r.route === 'mutate' && JSON.stringify(r.body).includes('replicaset-controller'),
    );
    const binding = s.mg.reviews.find(
      (r) => (r.body as { request: { subResource?: string } }).request.subResource === 'binding',
    );
    expect(podCreate && binding).toBeTruthy();
    const pod = (podCreate!.body as { request: { object: V1Pod } }).request.object;
    // What the apiserver defaulted before calling us: a hand-written fixture would lack these.
    expect(pod.spec!.containers[0].terminationMessagePath).toBe('/dev/termination-log');
    expect(pod.spec!.dnsPolicy).toBe('ClusterFirst');
    expect((binding!.body as { request: { object: { target: { name: string } } } }).request.object.target.name).toMatch(
      /^node-/,
    );
    if (process.env.CAPTURE === '1') {
      writeFileSync(
        new URL('./fixtures/pod-create.review.json', import.meta.url),
        `${JSON.stringify(podCreate!.body, null, 2)}\n`,
      );
      writeFileSync(
        new URL('./fixtures/pod-binding.review.json', import.meta.url),
        `${JSON.stringify(binding!.body, null, 2)}\n`,
      );
    }
  });
});

describe('failurePolicy (runs last: it stops meshgate)', () => {
  it('Fail refuses pods in opted-in namespaces while meshgate is down; Ignore admits them; other namespaces are never affected', async () => {
    const t0 = Date.now();
    await s.mg.stop();
    console.log(`[failurePolicy] meshgate stopped in ${Date.now() - t0} ms`);
    const refused = await s.core
      .createNamespacedPod({ namespace: 'mesh', body: restrictedPod('while-down') })
      .catch((e) => e);
    console.log(`[failurePolicy] refused after ${Date.now() - t0} ms: ${apiError(refused)}`);
    expect(apiError(refused)).toMatch(/failed calling webhook "inject\.meshgate\.io"/);
    expect(
      (await s.core.createNamespacedPod({ namespace: 'plain', body: restrictedPod('other-ns') })).metadata!.name,
    ).toBe('other-ns');

    await s.mg.register({ failurePolicy: 'Ignore' });
    const admitted = await s.core.createNamespacedPod({ namespace: 'mesh', body: restrictedPod('while-down-ignored') });
    expect(names(admitted)).toEqual({ init: [], containers: ['app'] });
  }, 120_000);
});
