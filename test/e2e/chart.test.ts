// charts/meshgate against a real kube-apiserver: every rendered object passes server-side dry-run for each mesh
// profile and mode, `helm install` works, the webhooks can never block meshgate's own namespace or kube-system, every
// admission policy type-checks, and the node policies let the node agent's real publisher change its own Node's
// meshgate keys and nothing else. The other policies: test/e2e/chart-policies.test.ts.
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeNodePublisher } from '../../src/agent/kube-publisher.ts';
import { chartDir, helmWithValues, parseManifests, templateArgs, type Obj } from '../chart/helm.ts';
import { profileValues } from '../chart/profiles.ts';
import { describeError, freePort, startControlPlane, waitFor, type ControlPlane } from './harness/index.ts';
import { impersonate, serviceAccount } from './impersonate.ts';
import { daemonClient } from './daemon-client.ts';
import { testVerdict } from './meshgate.ts';

const NS = 'meshgate';
/** The node agent's service account; with a node, as its token bound to a pod there presents it. */
const AGENT = serviceAccount(NS, 'meshgate-node-agent');
const agentAs = (admin: KubeConfig, node?: string) => impersonate(admin, AGENT, node);

describe('meshgate chart on a real apiserver', () => {
  let cp: ControlPlane;
  let core: CoreV1Api;

  beforeAll(async () => {
    cp = await startControlPlane({ nodes: [{ name: 'node-a' }, { name: 'node-b' }] });
    core = cp.kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
  }, 300_000);

  afterAll(async () => {
    await cp?.stop();
  });

  const modes: Array<[string, Obj]> = [
    ['istio', profileValues('istio')],
    [
      'linkerd, pod opt-in by label in team namespaces',
      profileValues('linkerd', { config: { injection: { podOptInNamespaceLabels: { team: 'a' } } } }),
    ],
    [
      'custom, redirect required, mutating Ignore',
      profileValues('custom', {
        config: { redirect: { mode: 'required' } },
        webhook: { mutating: { failurePolicy: 'Ignore' } },
      }),
    ],
    [
      'istio, cert-manager (its CRDs aside), repair withdrawing verdicts',
      profileValues('istio', { certs: { mode: 'cert-manager' }, repairController: { withdrawVerdicts: true } }),
    ],
    [
      'istio with own selectors and match conditions',
      profileValues('istio', {
        webhook: {
          selectors: [
            {
              name: 'team-a',
              namespaceSelector: { matchLabels: { team: 'a' } },
              objectSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
            },
          ],
          matchConditions: [
            { name: 'not-load-tests', expression: "!('load-test' in object.metadata.?labels.orValue({}))" },
          ],
        },
      }),
    ],
    [
      'crio, two bin dirs, taint, one replica each',
      profileValues('linkerd', {
        webhook: { replicas: 1 },
        repairController: { replicas: 1 },
        nodeAgent: { runtime: 'crio', cniBinDirs: ['/opt/cni/bin', '/usr/libexec/cni'], taintUnverified: true },
      }),
    ],
    [
      'platform values: OpenShift (Multus dirs and paths, the additional network, the SCC RBAC), GKE quota',
      profileValues('istio', {
        config: { cni: { multusNetwork: 'default/istio-cni' }, redirect: { mode: 'required' } },
        nodeAgent: {
          runtime: 'crio',
          cniConfDir: '/etc/kubernetes/cni/net.d',
          cniBinDirs: ['/var/lib/cni/bin', '/usr/libexec/cni'],
          multus: {
            dirs: ['/run/multus/cni/net.d', '/etc/cni/multus/net.d'],
            paths: [{ from: '/host/run/multus/cni/net.d', to: '/run/multus/cni/net.d' }],
          },
        },
        openshift: { scc: { enabled: true } },
        priorityClassQuota: { enabled: true },
      }),
    ],
  ];

  it.each(modes)('server-side dry-run accepts every object: %s', async (_name, values) => {
    const res = await helmWithValues(templateArgs({ namespace: NS }), values);
    expect(res.code, res.stderr).toBe(0);
    // No cert-manager or OpenShift here: their kinds are checked by the chart tests, the rest by the apiserver.
    const docs = parseManifests(res.stdout).docs.filter(
      (d) => !String(d.apiVersion).startsWith('cert-manager.io/') && d.kind !== 'SecurityContextConstraints',
    );
    const applied = await cp.kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: docs.map((d) => stringify(d)).join('---\n'),
    });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout.trim().split('\n')).toHaveLength(docs.length);
  });

  describe('after helm install', () => {
    beforeAll(async () => {
      const res = await cp.helm(['install', 'meshgate', chartDir, '--namespace', NS, '--set', 'mesh=istio']);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain('for mesh "istio"');
      expect(res.stdout).toContain('kubectl label namespace NAMESPACE meshgate.io/inject=enabled');
      expect(res.stdout).toContain('istio-injection=enabled or istio.io/rev');
      expect(res.stdout).toContain('validation container (istio-validation) failed');
      expect(res.stdout).toContain('kubectl get nodes -L meshgate.io/cni-verified');
      expect(res.stdout).toContain('check-node --plugin-type istio-cni');
      // A new install audits first, and says how to promote.
      expect(res.stdout).toContain('meshgate.io/enforcement are at level AUDIT');
      expect(res.stdout).toContain('kubectl label namespace NAMESPACE meshgate.io/enforcement=enforce --overwrite');
      // The policy takes effect a moment after it is created. Probe with a change that is harmless if allowed.
      const probe = agentAs(cp.kc).makeApiClient(CoreV1Api);
      let n = 0;
      await waitFor('the node-agent policy to be enforced', () =>
        probe
          .patchNode(
            { name: 'node-b', body: { metadata: { annotations: { 'meshgate.test/probe': String(n++) } } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          )
          .then(
            () => false,
            (err) => describeError(err).includes('ValidatingAdmissionPolicy'),
          ),
      );
    }, 120_000);

    const pod = (name: string): V1Pod => ({
      metadata: { name },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    });

    it('opted-in namespaces reach the webhooks, meshgate’s own and kube-system never do (even when labelled)', async () => {
      // The installed Service's ClusterIP is not routable here (and must not be dialled: loopback only), so point
      // both installed configurations at a closed loopback port: a call then fails at once and, with
      // failurePolicy Fail, refuses the pod. The selectors under test stay exactly as the chart rendered them.
      const port = await freePort();
      const admission = cp.kc.makeApiClient(AdmissionregistrationV1Api);
      for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration']) {
        const path = kind.startsWith('mutating') ? '/mutate' : '/validate';
        const config = kind.startsWith('mutating')
          ? await admission.readMutatingWebhookConfiguration({ name: 'meshgate' })
          : await admission.readValidatingWebhookConfiguration({ name: 'meshgate' });
        const ops = (config.webhooks ?? []).map((_w, i) => ({
          op: 'replace',
          path: `/webhooks/${i}/clientConfig`,
          value: { url: `https://127.0.0.1:${port}${path}` },
        }));
        const res = await cp.kubectl(['patch', kind, 'meshgate', '--type=json', '-p', JSON.stringify(ops)]);
        expect(res.code, res.stderr).toBe(0);
      }
      // app at enforce: its entries fail closed (at audit, the default, they fail open: asserted below).
      for (const ns of ['app', 'trial', NS, 'kube-system']) {
        if (ns === 'app' || ns === 'trial') await core.createNamespace({ body: { metadata: { name: ns } } });
        const level = ns === 'app' ? { 'meshgate.io/enforcement': 'enforce' } : {};
        await core.patchNamespace(
          { name: ns, body: { metadata: { labels: { 'meshgate.io/inject': 'enabled', ...level } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        await waitFor(`ServiceAccount ${ns}/default`, () =>
          core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
        );
      }
      const refused = await core.createNamespacedPod({ namespace: 'app', body: pod('refused') }).then(
        () => 'created',
        (err) => describeError(err),
      );
      expect(refused).toContain('failed calling webhook');
      expect(refused).toContain('failed calling webhook \\"ns-meshgate.mutate.meshgate.io\\"');
      // trial is at the default level, audit, whose entries fail open (issue 34 §2): the same outage refuses nothing.
      for (const ns of ['trial', NS, 'kube-system']) {
        const created = await core.createNamespacedPod({ namespace: ns, body: pod('allowed') });
        expect(created.metadata?.name).toBe('allowed');
      }
    });

    it.each([
      'meshgate-enforcement',
      'meshgate-node-writers',
      'meshgate-node-verdict',
      'meshgate-webhook-configs',
      'meshgate-webhook-secret',
      'meshgate-repair-controller',
    ])(
      'admission policy %s type-checks (no warnings in its status)',
      async (name) => {
        const api = cp.kc.makeApiClient(AdmissionregistrationV1Api);
        const policy = await waitFor(
          `policy ${name} type-checked`,
          async () => {
            const p = await api.readValidatingAdmissionPolicy({ name });
            return p.status?.observedGeneration === p.metadata?.generation && p;
          },
          { timeoutMs: 60_000 },
        );
        expect(
          (policy.status?.typeChecking?.expressionWarnings ?? []).map(
            (w) => `${w.fieldRef}: ${w.warning.split('\n')[0]}`,
          ),
        ).toEqual([]);
      },
      90_000,
    );

    it('the agent’s real publisher may write its own Node: label, annotation, condition and taint', async () => {
      const publisher = new KubeNodePublisher(daemonClient(agentAs(cp.kc, 'node-a')));
      await publisher.publish('node-a', testVerdict(false), true);
      let state = await publisher.read('node-a');
      expect(state).toMatchObject({
        label: 'false',
        tainted: true,
        condition: { status: 'False', reason: 'mesh_plugin_missing' },
      });
      await publisher.publish('node-a', testVerdict(true), true);
      state = await publisher.read('node-a');
      expect(state).toMatchObject({ label: 'true', tainted: false, condition: { status: 'True' } });
    });

    /** 'allowed', or the apiserver's error. */
    const denied = async (kc: KubeConfig, node: string, body: Obj, status: boolean): Promise<string> => {
      const api = kc.makeApiClient(CoreV1Api);
      const call = status
        ? api.patchNodeStatus({ name: node, body }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch))
        : api.patchNode({ name: node, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      return call.then(
        () => 'allowed',
        (err) => describeError(err),
      );
    };

    it.each<[string, string | undefined, string, Obj, boolean, string]>([
      [
        'another Node',
        'node-a',
        'node-b',
        { metadata: { labels: { 'meshgate.io/cni-verified': 'true' } } },
        false,
        'the meshgate node agent on node node-a may not change node node-b',
      ],
      [
        'a token bound to no node',
        undefined,
        'node-a',
        { metadata: { labels: { 'meshgate.io/cni-verified': 'true' } } },
        false,
        'its token names no node',
      ],
      [
        'another label',
        'node-a',
        'node-a',
        { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } },
        false,
        'may change no label but meshgate.io/cni-verified',
      ],
      [
        'another annotation',
        'node-a',
        'node-a',
        { metadata: { annotations: { 'x.example/y': 'z' } } },
        false,
        'may change no annotation but meshgate.io/cni-evidence',
      ],
      ['cordoning', 'node-a', 'node-a', { spec: { unschedulable: true } }, false, "may not change the Node's spec"],
      [
        'a NoExecute meshgate taint',
        'node-a',
        'node-a',
        { spec: { taints: [{ key: 'meshgate.io/cni-unverified', effect: 'NoExecute' }] } },
        false,
        'may change no taint but meshgate.io/cni-unverified:NoSchedule',
      ],
      [
        'another condition',
        'node-a',
        'node-a',
        { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Evil' }] } },
        true,
        'may change no condition but MeshCNIVerified',
      ],
      [
        'node addresses',
        'node-a',
        'node-a',
        { status: { addresses: [{ type: 'InternalIP', address: '203.0.113.9' }] } },
        true,
        "may not change the Node's status",
      ],
      [
        'node capacity',
        'node-a',
        'node-a',
        { status: { capacity: { cpu: '999' } } },
        true,
        "may not change the Node's status",
      ],
    ])('denies the agent %s', async (_name, tokenNode, node, body, status, message) => {
      const result = await denied(agentAs(cp.kc, tokenNode), node, body, status);
      expect(result).toContain('HTTP 403');
      expect(result).toContain(message);
    });
  });
});
