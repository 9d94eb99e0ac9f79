// Issue 21 §5 on a real kube-apiserver: with withdrawVerdicts on, a user who may create pods only in a namespace
// meshgate does not guard makes bare pods that look exactly like failed meshgate pods (label meshgate.io/redirect, an
// istio-validation init container that exits 42 — the kubelet reports that exit faithfully — and nodeName) and must
// NOT get the node's verdict withdrawn; three real failed meshgate pods in a guarded namespace still withdraw it.
// Real parts: the chart (its RBAC and policies; its two webhook configurations, pointed at meshgate's real server in
// this process), Istio 1.27's real injector, meshgate's webhook acting as the chart's webhook service account (it
// creates the admission mark's Secret itself), the repair controller as the chart's repair service account, the
// user by impersonation. Nodes are kwok's: validator exits are written through the status subresource as a kubelet
// would. Figures are printed, not asserted (2 shared cores).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/load.ts';
import { ensureMarkKeySecret } from '../../src/kube/mark-key-secret.ts';
import { readKeyRing } from '../../src/mark/keys.ts';
import { ADMITTED_ANNOTATION, epochSeconds, verifyMark } from '../../src/mark/mark.ts';
import { QUARANTINE_ANNOTATION } from '../../src/node/quarantine.ts';
import type { RunningRepair } from '../../src/repair/run.ts';
import { rawConfig } from '../support/config.ts';
import { waitFor, type ControlPlane } from './harness/index.ts';
import { grantRole, impersonate, outcome, serviceAccount, type Identity } from './impersonate.ts';
import { installChart, logger, startConfigRepair, testQuarantine } from './harness/suite.ts';
import { startMeshedCluster } from './harness/clusters.ts';
import { apiError, createNamespace, pointChartWebhooksAt, restrictedPod, startMeshgate } from './meshgate.ts';
import { daemonClient } from './daemon-client.ts';
import { validatorCrashLoop } from './validator-status.ts';
import { scratchDir, shared } from './harness/shared.ts';

const NS = 'meshgate';
const GUARDED = 'shop';
const OPEN = 'sandbox';
const MARK_SECRET = 'meshgate-admission-mark';
const WEBHOOK = serviceAccount(NS, 'meshgate');
const REPAIR = serviceAccount(NS, 'meshgate-repair-controller');
const MALLORY: Identity = { user: 'mallory@example.com' };
const VERIFIED = 'meshgate.io/cni-verified';
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const figures: string[] = [];

describe('only meshgate’s own pods move a node’s verdict (issue 21 §5)', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;
  let repair: RunningRepair;
  let keyDir: string;
  const owners: Record<string, { apiVersion: string; kind: string; name: string; uid: string; controller: boolean }> =
    {};
  const as = (who: Identity) => impersonate(cp.kc, who).makeApiClient(CoreV1Api);

  shared(async (stopLater) => {
    stopLater(() => {
      if (figures.length) console.log(`admission mark on a real apiserver:\n  ${figures.join('\n  ')}`);
    });
    // Verified, published before the chart's node policies reserve that to the node agent.
    ({ cp, core } = await startMeshedCluster(stopLater, { 'node-a': true, 'node-b': true }));
    await installChart(
      cp,
      NS,
      '--set',
      'nodeAgent.enabled=false',
      '--set',
      'repairController.withdrawVerdicts=true',
      '--set',
      'repairController.unmeshedPods=off',
      // Pods are judged as enforce judges them (a new install audits first: config.enforcement.default).
      '--set',
      'config.enforcement.default=enforce',
    );
    // The mounted Secret, empty until the kubelet's next sync after the webhook created it.
    keyDir = scratchDir(stopLater, 'meshgate-mark-e2e-');
    const mg = stopLater(
      await startMeshgate(cp, {}, 'istio', {
        kc: impersonate(cp.kc, WEBHOOK),
        markKeys: { dir: keyDir, createSecret: { namespace: NS, name: MARK_SECRET } },
      }),
    );
    await pointChartWebhooksAt(cp, mg.server.url, mg.server.ca!);
    // The kubelet mounts the Secret the webhook made into the repair controller's pod (and, later, the webhook's).
    const secret = await core.readNamespacedSecret({ name: MARK_SECRET, namespace: NS });
    writeFileSync(join(keyDir, 'key'), Buffer.from(secret.data!.key, 'base64'));
    await createNamespace(cp, GUARDED, { 'istio-injection': 'enabled' });
    await createNamespace(cp, OPEN);
    for (const ns of [GUARDED, OPEN]) {
      const cm = await waitFor(`kube-root-ca.crt in ${ns}`, () =>
        core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: ns }),
      );
      // A controller the garbage collector finds: any object will do.
      owners[ns] = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'kube-root-ca.crt',
        uid: cm.metadata!.uid!,
        controller: true,
      };
    }
    // Mallory may create and read pods in the open namespace, nothing else.
    await grantRole(
      cp.kc,
      OPEN,
      'pods',
      { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create', 'get', 'list', 'watch'] }] },
      MALLORY,
    );
    repair = stopLater(
      await startConfigRepair(cp, buildConfig(rawConfig('istio', { meshNamespace: NS })), keyDir, {
        kc: impersonate(cp.kc, REPAIR),
        maxDeletesPerMinute: 100,
        listen: { host: '127.0.0.1', port: 0 },
        logger: logger('silent'),
        quarantine: testQuarantine(NS, { baseMs: 10 * 60_000, maxMs: 60 * 60_000, maxPerHour: 3 }),
      }),
    );
  });

  /** Waits until kwok runs the pod (after that it leaves the status alone), then reports its validator's exit 42. */
  async function validatorExits42(namespace: string, name: string): Promise<void> {
    await waitFor(
      `${namespace}/${name} Running`,
      async () => (await core.readNamespacedPod({ name, namespace })).status?.phase === 'Running',
    );
    await core.patchNamespacedPodStatus(
      { name, namespace, body: { status: validatorCrashLoop('the probe reached 127.0.0.6:15002 itself', new Date()) } },
      strategic,
    );
  }

  async function untrusted(): Promise<Record<string, number>> {
    const text = await (await fetch(`http://127.0.0.1:${repair.port}/metrics`)).text();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^meshgate_repair_untrusted_failures_total\{why="([a-z_]+)"\} (\d+)$/gm))
      out[m[1]] = Number(m[2]);
    return out;
  }

  const ring = () => {
    const r = readKeyRing(keyDir);
    if (!r.ok) throw new Error(r.error);
    return r.ring;
  };
  const markOf = (p: V1Pod) => p.metadata?.annotations?.[ADMITTED_ANNOTATION];
  const node = () => core.readNode({ name: 'node-a' });
  let realMark = '';

  it('the webhook made the mark’s Secret as its own service account, once', async () => {
    const s = await core.readNamespacedSecret({ name: MARK_SECRET, namespace: NS });
    expect(s.type).toBe('Opaque');
    expect(Buffer.from(s.data!.key, 'base64')).toHaveLength(32);
    expect(s.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('meshgate');
    // A second replica starting finds it and leaves it alone.
    expect(await ensureMarkKeySecret(daemonClient(impersonate(cp.kc, WEBHOOK)), NS, MARK_SECRET)).toEqual({
      created: false,
    });
    // The token cannot read it back (the key reaches the webhook as a mounted volume).
    expect(await outcome(as(WEBHOOK).readNamespacedSecret({ name: MARK_SECRET, namespace: NS }))).toContain('HTTP 403');
  });

  it('a pod admitted in a guarded namespace carries a mark that verifies; its mark cannot be changed', async () => {
    const p = await core.createNamespacedPod({
      namespace: GUARDED,
      body: restrictedPod('real-0', { nodeName: 'node-a' }),
    });
    expect(p.spec!.initContainers!.map((c) => c.name)).toContain('istio-validation');
    realMark = markOf(p) ?? '';
    const created = epochSeconds(p.metadata!.creationTimestamp)!;
    expect(verifyMark(ring(), realMark, GUARDED, created)).toMatchObject({ ok: true });
    const changed = await outcome(
      core.patchNamespacedPod(
        { name: 'real-0', namespace: GUARDED, body: { metadata: { annotations: { [ADMITTED_ANNOTATION]: null } } } },
        merge,
      ),
    );
    expect(changed).toContain(`the update changes annotation ${ADMITTED_ANNOTATION}`);
    expect(changed).toContain('[mesh_metadata_changed]');
  });

  it('a pod Mallory opts in by its own label in the open namespace is meshed, but not marked', async () => {
    const body = restrictedPod('opted-in', { nodeName: 'node-a' });
    body.metadata!.labels = { ...body.metadata!.labels, 'sidecar.istio.io/inject': 'true' };
    const p = await as(MALLORY).createNamespacedPod({ namespace: OPEN, body });
    expect(p.spec!.initContainers!.map((c) => c.name)).toContain('istio-validation');
    expect(p.metadata!.labels!['meshgate.io/redirect']).toBe('cni');
    expect(markOf(p)).toBeUndefined();
    // Nor may she bring a mark of her own through that route.
    const copied = restrictedPod('opted-in-copied', { nodeName: 'node-a' });
    copied.metadata!.labels = { ...copied.metadata!.labels, 'sidecar.istio.io/inject': 'true' };
    copied.metadata!.annotations = { [ADMITTED_ANNOTATION]: realMark };
    expect(
      apiError(
        await as(MALLORY)
          .createNamespacedPod({ namespace: OPEN, body: copied })
          .catch((e) => e),
      ),
    ).toMatch(/meshgate marks only pods of namespaces whose every pod it reviews.*\[admission_mark_invalid\]/);
  });

  it('Mallory’s look-alikes (and her opted-in pod) failing on node-a do not withdraw it', async () => {
    const forged = `v1.${ring().signer.id}.${Math.floor(Date.now() / 1000)}.${randomBytes(32).toString('base64url').slice(0, 43)}`;
    const lookAlike = (name: string, annotations: Record<string, string>): V1Pod => ({
      metadata: {
        name,
        labels: { app: 'web', 'meshgate.io/redirect': 'cni' },
        annotations,
        ownerReferences: [owners[OPEN]],
      },
      spec: {
        nodeName: 'node-a',
        initContainers: [
          { name: 'istio-validation', image: 'docker.io/library/busybox:1.36', command: ['sh', '-c', 'exit 42'] },
        ],
        containers: [{ name: 'app', image: 'docker.io/library/nginx:1.27' }],
      },
    });
    const pods: Array<[string, Record<string, string>]> = [
      ['look-alike-1', {}],
      ['look-alike-2', { [ADMITTED_ANNOTATION]: realMark }], // copied from the guarded namespace
      ['look-alike-3', { [ADMITTED_ANNOTATION]: forged }], // meshgate's form, a made-up signature
    ];
    for (const [name, annotations] of pods)
      await as(MALLORY).createNamespacedPod({ namespace: OPEN, body: lookAlike(name, annotations) });
    const t0 = Date.now();
    for (const [name] of pods) await validatorExits42(OPEN, name);
    await validatorExits42(OPEN, 'opted-in');
    const seen = await waitFor('the repair controller to judge all four', async () => {
      const u = await untrusted();
      return (u.mark_missing ?? 0) + (u.mark_invalid ?? 0) === 4 && u;
    });
    figures.push(`4 untrusted failures judged ${Date.now() - t0} ms after the first status write`);
    expect(seen).toEqual({ mark_missing: 2, mark_invalid: 2 });
    const n = await node();
    expect(n.metadata!.labels![VERIFIED]).toBe('true');
    expect(n.metadata!.annotations?.[QUARANTINE_ANNOTATION]).toBeUndefined();
    const events = (await core.listNamespacedEvent({ namespace: OPEN })).items.filter(
      (e) => e.source?.component === 'meshgate-repair-controller',
    );
    expect(events).toEqual([]);
    for (const [name] of pods)
      expect((await core.readNamespacedPod({ name, namespace: OPEN })).metadata?.deletionTimestamp).toBeUndefined();
    // A stolen repair token cannot delete an unmarked look-alike either (the chart's policy checks the mark's form).
    expect(await outcome(as(REPAIR).deleteNamespacedPod({ name: 'look-alike-1', namespace: OPEN }))).toContain(
      'it carries no admission mark (meshgate.io/admitted) of the form meshgate writes',
    );
  }, 120_000);

  it('three real failed meshgate pods in the guarded namespace still withdraw node-a, and are deleted', async () => {
    let tLast = 0;
    for (const name of ['real-1', 'real-2', 'real-3']) {
      const body = restrictedPod(name, { nodeName: 'node-a' });
      body.metadata!.ownerReferences = [owners[GUARDED]];
      const p = await core.createNamespacedPod({ namespace: GUARDED, body });
      expect(markOf(p)).toBeDefined();
      await validatorExits42(GUARDED, name);
      tLast = Date.now();
    }
    const withdrawn = await waitFor(
      'node-a withdrawn',
      async () => {
        const n = await node();
        return n.metadata?.labels?.[VERIFIED] === 'false' && n.metadata.annotations?.[QUARANTINE_ANNOTATION]
          ? n
          : false;
      },
      { timeoutMs: 30_000 },
    );
    figures.push(`3rd real failure → node-a withdrawn: ${Date.now() - tLast} ms`);
    const mark = JSON.parse(withdrawn.metadata!.annotations![QUARANTINE_ANNOTATION]);
    expect(mark.failures.map((f: { pod: string }) => f.pod).sort()).toEqual([
      `${GUARDED}/real-1`,
      `${GUARDED}/real-2`,
      `${GUARDED}/real-3`,
    ]);
    // Their controller recreates them: the repair controller deleted them, which the chart's policy let it.
    for (const name of ['real-1', 'real-2', 'real-3'])
      await waitFor(`${name} deleted`, () =>
        core.readNamespacedPod({ name, namespace: GUARDED }).then(
          (p) => !!p.metadata?.deletionTimestamp,
          () => true,
        ),
      );
    expect((await node()).metadata!.annotations![QUARANTINE_ANNOTATION]).toBe(
      withdrawn.metadata!.annotations![QUARANTINE_ANNOTATION],
    );
  }, 120_000);
});
