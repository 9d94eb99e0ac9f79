// The chart's admission policies against a real kube-apiserver, each request made as the user it is about
// (impersonation): who may say a node is verified (kubelets, node-patching operators, the node lifecycle controller,
// the repair controller), what the webhook's service account may change on its webhook configurations and which
// Secret it may create, which pods the repair controller's service account may delete, and which the node agent's
// proxy guard may delete.
import {
  AdmissionregistrationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  V1MicroTime,
  type V1Lease,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeNodePublisher } from '../../src/agent/kube-publisher.ts';
import { syncCaBundle } from '../../src/kube/ca-bundle.ts';
import { kubeSecretStore } from '../../src/kube/secret-store.ts';
import { startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { installChart } from './harness/suite.ts';
import { grantClusterRole, impersonate, kubelet, outcome, serviceAccount, type Identity } from './impersonate.ts';
import { ensureMarkKeySecret } from '../../src/kube/mark-key-secret.ts';
import { markFor } from '../support/mark.ts';
import { daemonClient } from './daemon-client.ts';
import { testVerdict } from './meshgate.ts';

const NS = 'meshgate';
const AGENT = serviceAccount(NS, 'meshgate-node-agent');
const REPAIR = serviceAccount(NS, 'meshgate-repair-controller');
const WEBHOOK = serviceAccount(NS, 'meshgate');
const OPS: Identity = { user: 'ops@example.com' };
const NODE_CONTROLLER = serviceAccount('kube-system', 'node-controller');
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** 'allowed', or the apiserver's error. */

/** A read-modify-write of a Node (taints carry the resourceVersion they were computed from): retried on 409. */
async function withFreshNode(fn: () => Promise<string>): Promise<string> {
  return waitFor('a write without a conflict', async () => {
    const r = await fn();
    return r.startsWith('HTTP 409') ? false : r;
  });
}

describe('the chart’s admission policies on a real apiserver', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;
  const as = (who: Identity, node?: string): KubeConfig => impersonate(cp.kc, who, node);
  const api = (who: Identity, node?: string) => as(who, node).makeApiClient(CoreV1Api);

  beforeAll(async () => {
    cp = await startControlPlane({ nodes: [{ name: 'node-a' }, { name: 'node-b' }] });
    core = cp.kc.makeApiClient(CoreV1Api);
    await installChart(cp, NS, '--set', 'repairController.withdrawVerdicts=true');
    // An operator allowed to patch Nodes (as cluster tooling often is), to show that RBAC alone would let it lie.
    await grantClusterRole(
      cp.kc,
      'node-ops',
      [{ apiGroups: [''], resources: ['nodes', 'nodes/status'], verbs: ['get', 'patch', 'update'] }],
      OPS,
    );
    // Policies take effect a moment after they are created: wait until each refuses a request it must refuse.
    // The node and webhook-configs probes alternate the value they write, so a probe that got through early does not
    // make the next one a no-op (which the policies, comparing old and new, rightly allow).
    let n = 0;
    await core.createNode({ body: { metadata: { name: 'probe' } } });
    await waitFor('the node policies to be enforced', () =>
      outcome(
        api(OPS).patchNode(
          { name: 'probe', body: { metadata: { labels: { 'meshgate.io/cni-verified': String(n++ % 2 === 0) } } } },
          merge,
        ),
      ).then((r) => r.includes('ValidatingAdmissionPolicy')),
    );
    await waitFor('the webhook policies to be enforced', () =>
      outcome(
        api(WEBHOOK).createNamespacedSecret({ namespace: NS, body: { metadata: { name: `probe-${n++}` } } }),
      ).then((r) => r.includes('ValidatingAdmissionPolicy')),
    );
    await waitFor('the webhook-configs policy to be enforced', () =>
      outcome(
        as(WEBHOOK)
          .makeApiClient(AdmissionregistrationV1Api)
          .patchMutatingWebhookConfiguration(
            { name: 'meshgate', body: [{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 28 + (n++ % 2) }] },
            jsonPatch,
          ),
      ).then((r) => r.includes('ValidatingAdmissionPolicy')),
    );
  }, 300_000);

  afterAll(async () => {
    await cp?.stop();
  });

  describe('node verdicts: only the node agent, and the repair controller only to withdraw', () => {
    beforeAll(async () => {
      // node-a's agent publishes a verified verdict (allowed: the agent, its own Node).
      await new KubeNodePublisher(daemonClient(as(AGENT, 'node-a'))).publish('node-a', testVerdict(true), true);
    });

    const node = (
      name: string,
      labels: Record<string, string> = {},
      taints: Array<{ key: string; effect: string }> = [],
    ) => ({ metadata: { name, labels }, spec: { taints } });

    it('a kubelet registering its Node with --node-labels meshgate.io/cni-verified=true is refused', async () => {
      const r = await outcome(
        api(kubelet('node-k')).createNode({ body: node('node-k', { 'meshgate.io/cni-verified': 'true' }) }),
      );
      expect(r).toContain('HTTP 403');
      expect(r).toContain(
        'only the meshgate node agent of node node-k may set label meshgate.io/cni-verified (system:node:node-k may not)',
      );
    });

    it('a kubelet may register with the unverified taint (keeps meshed pods off until its agent verified it)', async () => {
      expect(
        await outcome(
          api(kubelet('node-t')).createNode({
            body: node('node-t', {}, [{ key: 'meshgate.io/cni-unverified', effect: 'NoSchedule' }]),
          }),
        ),
      ).toBe('allowed');
    });

    it('a kubelet’s own status updates pass; setting meshgate’s condition is refused', async () => {
      const k = api(kubelet('node-t'));
      const ready = {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'kubelet is posting ready status',
              lastHeartbeatTime: new Date(),
              lastTransitionTime: new Date(),
            },
          ],
        },
      };
      expect(await outcome(k.patchNodeStatus({ name: 'node-t', body: ready }, strategic))).toBe('allowed');
      const mesh = {
        status: { conditions: [{ type: 'MeshCNIVerified', status: 'True', reason: 'verified', message: 'trust me' }] },
      };
      const r = await outcome(k.patchNodeStatus({ name: 'node-t', body: mesh }, strategic));
      expect(r).toContain('HTTP 403');
      expect(r).toContain('may set condition MeshCNIVerified');
    });

    it.each<[string, Record<string, unknown>, boolean, string]>([
      [
        'the label',
        { metadata: { labels: { 'meshgate.io/cni-verified': 'true' } } },
        false,
        'may set label meshgate.io/cni-verified',
      ],
      [
        'the evidence',
        { metadata: { annotations: { 'meshgate.io/cni-evidence': '{"pluginType":"istio-cni"}' } } },
        false,
        'may set annotation meshgate.io/cni-evidence',
      ],
      [
        'the condition',
        { status: { conditions: [{ type: 'MeshCNIVerified', status: 'True', reason: 'verified' }] } },
        true,
        'may set condition MeshCNIVerified',
      ],
      ['removing the unverified taint', { spec: { taints: [] } }, false, 'may set taint meshgate.io/cni-unverified'],
    ])('an operator with node patch rights setting %s is refused', async (_what, body, status, message) => {
      // node-a carries the agent's taint? It is verified: start from node-t, which carries the registration taint.
      const target = message.includes('taint') ? 'node-t' : 'node-b';
      const ops = api(OPS);
      const r = await outcome(
        status ? ops.patchNodeStatus({ name: target, body }, strategic) : ops.patchNode({ name: target, body }, merge),
      );
      expect(r).toContain('HTTP 403');
      expect(r).toContain(message);
      expect(r).toContain('(ops@example.com may not)');
    });

    it('other node changes by operators and the node lifecycle controller’s taints still pass', async () => {
      expect(
        await outcome(
          api(OPS).patchNode(
            {
              name: 'node-b',
              body: { metadata: { labels: { 'topology.example.com/rack': 'r1' } }, spec: { unschedulable: true } },
            },
            merge,
          ),
        ),
      ).toBe('allowed');
      expect(
        await withFreshNode(async () => {
          const n = await core.readNode({ name: 'node-b' });
          const taints = [
            ...(n.spec?.taints ?? []),
            { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: new Date() },
          ];
          return outcome(
            api(NODE_CONTROLLER).patchNode(
              {
                name: 'node-b',
                body: { metadata: { resourceVersion: n.metadata?.resourceVersion }, spec: { taints } },
              },
              merge,
            ),
          );
        }),
      ).toBe('allowed');
    });

    it('the repair controller withdraws node-a’s verdict: label false, condition False, taint added', async () => {
      const repair = api(REPAIR);
      expect(
        await outcome(
          repair.patchNode(
            { name: 'node-a', body: { metadata: { labels: { 'meshgate.io/cni-verified': 'false' } } } },
            merge,
          ),
        ),
      ).toBe('allowed');
      const withdrawn = {
        status: {
          conditions: [
            {
              type: 'MeshCNIVerified',
              status: 'False',
              reason: 'node_quarantined',
              message: '3 pods failed redirect validation within 10m',
            },
          ],
        },
      };
      expect(await outcome(repair.patchNodeStatus({ name: 'node-a', body: withdrawn }, strategic))).toBe('allowed');
      expect(
        await withFreshNode(async () => {
          const n = await core.readNode({ name: 'node-a' });
          const taints = [...(n.spec?.taints ?? []), { key: 'meshgate.io/cni-unverified', effect: 'NoSchedule' }];
          return outcome(
            repair.patchNode(
              {
                name: 'node-a',
                body: { metadata: { resourceVersion: n.metadata?.resourceVersion }, spec: { taints } },
              },
              merge,
            ),
          );
        }),
      ).toBe('allowed');
      const after = await new KubeNodePublisher(daemonClient(cp.kc)).read('node-a');
      expect(after).toMatchObject({
        label: 'false',
        tainted: true,
        condition: { status: 'False', reason: 'node_quarantined' },
      });
    });

    it.each<[string, Record<string, unknown>, boolean, string]>([
      [
        'making it verified again (label)',
        { metadata: { labels: { 'meshgate.io/cni-verified': 'true' } } },
        false,
        'the meshgate repair controller may only withdraw a node verdict',
      ],
      [
        'making it verified again (condition)',
        { status: { conditions: [{ type: 'MeshCNIVerified', status: 'True', reason: 'verified' }] } },
        true,
        'not change condition MeshCNIVerified',
      ],
      [
        'rewriting the evidence',
        { metadata: { annotations: { 'meshgate.io/cni-evidence': '{}' } } },
        false,
        'not change annotation meshgate.io/cni-evidence',
      ],
      ['removing the taint', { spec: { taints: [] } }, false, 'not change taint meshgate.io/cni-unverified'],
      [
        'touching another label',
        { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } },
        false,
        'the meshgate repair controller may change no label but meshgate.io/cni-verified',
      ],
    ])('the repair controller is refused %s', async (_what, body, status, message) => {
      const repair = api(REPAIR);
      const r = await outcome(
        status
          ? repair.patchNodeStatus({ name: 'node-a', body }, strategic)
          : repair.patchNode({ name: 'node-a', body }, merge),
      );
      expect(r).toContain('HTTP 403');
      expect(r).toContain(message);
    });

    it('the node agent gives the verdict back (only it may)', async () => {
      const publisher = new KubeNodePublisher(daemonClient(as(AGENT, 'node-a')));
      await publisher.publish('node-a', testVerdict(true), false);
      expect(await publisher.read('node-a')).toMatchObject({
        label: 'true',
        tainted: false,
        condition: { status: 'True' },
      });
    });
  });

  describe('the node agents’ Leases: each agent renews only its own node’s, nobody else writes one', () => {
    const leases = (who: Identity, node?: string) => as(who, node).makeApiClient(CoordinationV1Api);
    const lease = (node: string, holder = node): V1Lease => ({
      metadata: { name: `meshgate-node-${node}`, labels: { 'meshgate.io/node-lease': 'true' } },
      spec: { holderIdentity: holder, renewTime: new V1MicroTime() },
    });
    beforeAll(async () => {
      let n = 0;
      await waitFor('the node-lease policy to be enforced', () =>
        outcome(leases(REPAIR).createNamespacedLease({ namespace: NS, body: lease(`probe-${n++}`) })).then((r) =>
          r.includes('ValidatingAdmissionPolicy'),
        ),
      );
    });

    it('node-a’s agent renews its own Lease through meshgate’s publisher: held by node-a, owned by its Node', async () => {
      const uid = (await core.readNode({ name: 'node-a' })).metadata?.uid;
      const publisher = new KubeNodePublisher(daemonClient(as(AGENT, 'node-a')), undefined, {
        namespace: NS,
        durationSeconds: 1200,
      });
      await publisher.heartbeat('node-a', { nodeUid: uid });
      const first = await cp.kc
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ namespace: NS, name: 'meshgate-node-node-a' });
      await publisher.heartbeat('node-a', { nodeUid: uid });
      const second = await cp.kc
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ namespace: NS, name: 'meshgate-node-node-a' });
      expect(second.spec?.holderIdentity).toBe('node-a');
      expect(second.metadata?.labels).toMatchObject({ 'meshgate.io/node-lease': 'true' });
      expect(second.metadata?.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Node', name: 'node-a', uid }),
      ]);
      expect(second.metadata?.resourceVersion).not.toBe(first.metadata?.resourceVersion);
    });

    it.each<[string, Identity, string | undefined, V1Lease, string]>([
      [
        'node-a’s agent writing node-b’s Lease',
        AGENT,
        'node-a',
        lease('node-b'),
        'the meshgate node agent on node node-a may only write Lease meshgate-node-node-a, not meshgate-node-node-b',
      ],
      ['the agent with a token bound to no node', AGENT, undefined, lease('node-c'), 'its token names no node'],
      [
        'the agent writing a Lease that is not a node’s (the repair controller’s leader election)',
        AGENT,
        'node-a',
        { ...lease('node-a'), metadata: { name: 'meshgate-repair-controller', labels: {} } },
        'may only write Lease meshgate-node-node-a',
      ],
      [
        'the agent’s Lease held by another node',
        AGENT,
        'node-b',
        lease('node-b', 'node-a'),
        'must be held by its node (node-b)',
      ],
      [
        'the repair controller (it may create Leases) creating a node’s',
        REPAIR,
        undefined,
        lease('node-b'),
        'only that agent may create it or renew it',
      ],
    ])('%s is refused', async (_what, who, node, body, message) => {
      const r = await outcome(leases(who, node).createNamespacedLease({ namespace: NS, body }));
      expect(r).toContain('HTTP 403');
      expect(r).toContain(message);
    });

    it('nobody but the agent renews a node’s Lease (a forged renewal would keep a dead agent’s verdict fresh)', async () => {
      const admin = cp.kc.makeApiClient(CoordinationV1Api);
      const held = await admin.readNamespacedLease({ namespace: NS, name: 'meshgate-node-node-a' });
      const renewed = { ...held, spec: { ...held.spec, renewTime: new V1MicroTime(Date.now() + 60_000) } };
      const r = await outcome(
        admin.replaceNamespacedLease({ namespace: NS, name: 'meshgate-node-node-a', body: renewed }),
      );
      expect(r).toContain('HTTP 403');
      expect(r).toContain('only that agent may create it or renew it');
      // Its metadata is not the heartbeat: the garbage collector (or an operator) may still change that.
      const labelled = { ...held, metadata: { ...held.metadata, annotations: { note: 'ok' } } };
      expect(
        await outcome(admin.replaceNamespacedLease({ namespace: NS, name: 'meshgate-node-node-a', body: labelled })),
      ).toBe('allowed');
    });
  });

  describe('the webhook’s service account: caBundle of its own configurations, its own Secret', () => {
    const admission = () => as(WEBHOOK).makeApiClient(AdmissionregistrationV1Api);

    it('meshgate’s own caBundle sync (src/kube/ca-bundle.ts) passes, for every entry of both configurations', async () => {
      const patched = await syncCaBundle(daemonClient(as(WEBHOOK)), 'meshgate', cp.ca.certPem);
      const m = await cp.kc
        .makeApiClient(AdmissionregistrationV1Api)
        .readMutatingWebhookConfiguration({ name: 'meshgate' });
      // Five entries (mesh istio), once per enforcement level, in each configuration; the validating one's workload
      // entries (one per pod entry and level); and its exec/attach entries: one per namespace entry (three) and level
      // (issue 33 §1).
      expect(patched).toBe(54);
      expect(m.webhooks!.every((w) => w.clientConfig.caBundle === Buffer.from(cp.ca.certPem).toString('base64'))).toBe(
        true,
      );
    });

    it.each<[string, 'mutating' | 'validating', unknown[]]>([
      ['rules to every resource', 'mutating', [{ op: 'replace', path: '/webhooks/0/rules/0/resources', value: ['*'] }]],
      [
        'namespaceSelector {} (every namespace, meshgate’s own too)',
        'mutating',
        [{ op: 'replace', path: '/webhooks/0/namespaceSelector', value: {} }],
      ],
      ['failurePolicy Ignore', 'validating', [{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Ignore' }]],
      ['dropping the routine-update filter', 'validating', [{ op: 'remove', path: '/webhooks/0/matchConditions' }]],
      [
        'an objectSelector that selects nothing',
        'validating',
        [{ op: 'add', path: '/webhooks/1/objectSelector', value: { matchLabels: { never: 'x' } } }],
      ],
      ['removing an entry', 'validating', [{ op: 'remove', path: '/webhooks/2' }]],
      [
        'pointing clientConfig at another service',
        'mutating',
        [{ op: 'replace', path: '/webhooks/0/clientConfig/service/name', value: 'evil' }],
      ],
      [
        'reinvocationPolicy Never',
        'mutating',
        [{ op: 'replace', path: '/webhooks/0/reinvocationPolicy', value: 'Never' }],
      ],
      ['a label on the configuration', 'mutating', [{ op: 'add', path: '/metadata/labels/x', value: 'y' }]],
    ])('widening its configuration is refused: %s', async (_what, kind, ops) => {
      const a = admission();
      const call =
        kind === 'mutating'
          ? a.patchMutatingWebhookConfiguration({ name: 'meshgate', body: ops }, jsonPatch)
          : a.patchValidatingWebhookConfiguration({ name: 'meshgate', body: ops }, jsonPatch);
      const r = await outcome(call);
      expect(r).toContain('HTTP 403');
      expect(r).toContain('the meshgate webhook may change only');
    });

    it('it creates its own TLS Secret through meshgate’s store, and no other Secret', async () => {
      const store = kubeSecretStore(daemonClient(as(WEBHOOK)), NS, 'meshgate-tls');
      expect(
        await store.create({ 'ca.crt': 'a', 'ca.key': 'b', 'tls.crt': 'c', 'tls.key': 'd' } as never),
      ).toBeTruthy();
      const other = await outcome(
        api(WEBHOOK).createNamespacedSecret({
          namespace: NS,
          body: { metadata: { name: 'stolen' }, type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } },
        }),
      );
      expect(other).toContain(
        'the meshgate webhook may only write its own TLS Secret meshgate/meshgate-tls and create its admission ' +
          'mark Secret meshgate/meshgate-admission-mark, not meshgate/stolen',
      );
    });

    it('it creates the admission mark’s Secret once (Opaque), and may neither replace it nor make it of another type', async () => {
      const key = 'meshgate-admission-mark';
      expect(
        await outcome(
          api(WEBHOOK).createNamespacedSecret({
            namespace: NS,
            body: { metadata: { name: key }, type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } },
          }),
        ),
      ).toContain("the meshgate webhook's admission mark Secret must be of type Opaque");
      expect(await ensureMarkKeySecret(daemonClient(as(WEBHOOK)), NS, key)).toMatchObject({ created: true });
      expect(await ensureMarkKeySecret(daemonClient(as(WEBHOOK)), NS, key)).toEqual({ created: false });
      const s = await core.readNamespacedSecret({ name: key, namespace: NS });
      expect(Buffer.from(s.data!.key, 'base64')).toHaveLength(32);
      // Replacing the key (a stolen token choosing its own) is refused: RBAC gives no update, the policy create only.
      expect(
        await outcome(
          api(WEBHOOK).replaceNamespacedSecret({ name: key, namespace: NS, body: { ...s, data: { key: 'QUFBQQ==' } } }),
        ),
      ).toContain('HTTP 403');
    });
  });

  describe('the repair controller’s service account deletes only failed meshgate pods', () => {
    const APP = 'app';
    let owner: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean };

    beforeAll(async () => {
      await core.createNamespace({ body: { metadata: { name: APP } } });
      const cm = await waitFor('kube-root-ca.crt', () =>
        core.readNamespacedConfigMap({ name: 'kube-root-ca.crt', namespace: APP }),
      );
      // A controller the garbage collector finds (a missing owner would get the pod collected): any object will do.
      owner = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'kube-root-ca.crt',
        uid: cm.metadata!.uid!,
        controller: true,
      };
    });

    /** A pod pinned to a node nobody runs (so nothing else touches it), with its validator's status as a kubelet would write it. */
    async function pod(
      name: string,
      o: { label?: boolean; owned?: boolean; exitCode?: number; namespace?: string; mark?: string | null },
    ): Promise<void> {
      const namespace = o.namespace ?? APP;
      // The admission mark as meshgate's webhook would write it (the policy checks its form; the controller its HMAC).
      const mark = o.mark === undefined ? markFor(namespace, Math.floor(Date.now() / 1000)) : o.mark;
      const body: V1Pod = {
        metadata: {
          name,
          labels: o.label === false ? { app: 'x' } : { app: 'x', 'meshgate.io/redirect': 'cni' },
          annotations: mark === null ? {} : { 'meshgate.io/admitted': mark },
          ownerReferences: o.owned === false ? [] : [owner],
        },
        spec: {
          nodeName: 'node-gone',
          initContainers: [{ name: 'istio-validation', image: 'docker.io/istio/proxyv2:1.27.0' }],
          containers: [{ name: 'app', image: 'docker.io/library/nginx:1.27' }],
        },
      };
      if (namespace !== APP) body.metadata!.ownerReferences = [];
      await core.createNamespacedPod({ namespace, body });
      if (o.exitCode === undefined) return;
      const status = {
        status: {
          initContainerStatuses: [
            {
              name: 'istio-validation',
              image: 'docker.io/istio/proxyv2:1.27.0',
              imageID: '',
              ready: false,
              restartCount: 3,
              state: { waiting: { reason: 'CrashLoopBackOff' } },
              lastState: {
                terminated: { exitCode: o.exitCode, reason: 'Error', message: 'iptables validation failed' },
              },
            },
          ],
        },
      };
      await core.patchNamespacedPodStatus({ name, namespace, body: status }, strategic);
    }

    const del = (name: string, namespace = APP) =>
      outcome(api(REPAIR).deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }));

    it.each<[string, Parameters<typeof pod>[1], string]>([
      [
        'an unrelated pod (no meshgate label) even if its init container failed',
        { label: false, exitCode: 126 },
        'it is not a meshgate pod',
      ],
      [
        'a meshgate pod whose validation did not fail',
        { exitCode: 0 },
        'its status shows no failed validation container (istio-validation exit code 42 or 126)',
      ],
      [
        'a meshgate pod that failed for another reason (OOM)',
        { exitCode: 137 },
        'its status shows no failed validation container',
      ],
      [
        'a failed meshgate pod without a controller',
        { owned: false, exitCode: 42 },
        'it has no controller to recreate it',
      ],
      [
        'a failed look-alike without an admission mark',
        { exitCode: 42, mark: null },
        'it carries no admission mark (meshgate.io/admitted) of the form meshgate writes',
      ],
      [
        'a failed look-alike whose mark is not of meshgate’s form',
        { exitCode: 42, mark: 'v1.trust-me' },
        'it carries no admission mark (meshgate.io/admitted) of the form meshgate writes',
      ],
    ])('refused: %s', async (_what, o, message) => {
      const name = `p-${Math.random().toString(36).slice(2, 8)}`;
      await pod(name, o);
      const r = await del(name);
      expect(r).toContain('HTTP 403');
      expect(r).toContain(message);
    });

    it('refused in meshgate’s own and the system namespaces, whatever the pod says', async () => {
      await pod('failed-here', { namespace: NS, exitCode: 42 });
      expect(await del('failed-here', NS)).toContain(`meshgate never guards namespace ${NS}`);
    });

    it.each([
      ['Istio’s istio-validation', 126],
      ['meshgate’s validator', 42],
    ])('allowed: a failed meshgate pod with a controller (%s, exit %s)', async (_who, exitCode) => {
      const name = `failed-${exitCode}`;
      await pod(name, { exitCode });
      expect(await del(name)).toBe('allowed');
    });
  });

  describe('the node agent’s proxy guard deletes only meshgate-admitted pods on its own node', () => {
    const GUARDED = 'guarded';
    const STATUS = JSON.stringify({ version: 1, mode: 'cni', initContainers: ['istio-validation'], containers: [] });
    beforeAll(async () => {
      await core.createNamespace({ body: { metadata: { name: GUARDED } } });
      // Installed with the others: wait until it refuses what it must (a fresh look-alike each try).
      let n = 0;
      await waitFor('the node agent’s pods policy to be enforced', async () => {
        const name = `probe-${n++}`;
        await pod(name, 'node-a', 'none');
        return (await del(name)).includes('ValidatingAdmissionPolicy');
      });
    });

    /** A pod bound to `node` (nobody runs it), admitted by meshgate or not, in `namespace`. */
    async function pod(
      name: string,
      node: string,
      admitted: 'status' | 'mark' | 'bad-mark' | 'none',
      namespace = GUARDED,
    ) {
      const annotations: Record<string, string> = {
        status: { 'meshgate.io/status': STATUS },
        mark: { 'meshgate.io/admitted': markFor(namespace, Math.floor(Date.now() / 1000)) },
        'bad-mark': { 'meshgate.io/admitted': 'v1.trust-me' },
        none: {},
      }[admitted];
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name, annotations },
          spec: { nodeName: node, containers: [{ name: 'app', image: 'docker.io/library/nginx:1.27' }] },
        },
      });
    }
    const del = (name: string, namespace = GUARDED, node = 'node-a') =>
      outcome(api(AGENT, node).deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }));

    it.each<[string, string, Parameters<typeof pod>[2], string]>([
      ['a guarded pod on another node', 'node-b', 'status', 'may not delete pod guarded/'],
      ['a pod meshgate did not admit, on its node', 'node-a', 'none', 'meshgate did not admit it'],
      ['a look-alike whose mark is not of meshgate’s form', 'node-a', 'bad-mark', 'meshgate did not admit it'],
    ])('refused: %s', async (_what, node, admitted, message) => {
      const name = `g-${Math.random().toString(36).slice(2, 8)}`;
      await pod(name, node, admitted);
      const r = await del(name);
      expect(r).toContain('HTTP 403');
      expect(r).toContain(message);
    });

    it('refused in meshgate’s own namespace, and to an agent whose token names no node', async () => {
      await pod('own', 'node-a', 'status', NS);
      expect(await del('own', NS)).toContain(`meshgate never guards namespace ${NS}`);
      await pod('nameless', 'node-a', 'status');
      const r = await outcome(api(AGENT).deleteNamespacedPod({ name: 'nameless', namespace: GUARDED }));
      expect(r).toContain('its token names no node');
    });

    it.each<[string, Parameters<typeof pod>[2]]>([
      ['meshgate’s status annotation', 'status'],
      ['an admission mark of meshgate’s form', 'mark'],
    ])('allowed: a pod on its own node carrying %s', async (_what, admitted) => {
      const name = `ok-${admitted}`;
      await pod(name, 'node-a', admitted);
      expect(await del(name)).toBe('allowed');
    });
  });
});
