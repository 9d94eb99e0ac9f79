/**
 * Issue 33 §1, §2, §6 and §8 on a real kube-apiserver with the chart installed by real helm, its webhook
 * configurations pointed at meshgate's server in this process (configured from the chart's ConfigMap), Istio's REAL
 * injector, and people acting as themselves (impersonation, `kubectl --as`):
 *   §1 `kubectl exec`/`attach` into an Istio-injected pod's istio-proxy as the namespace's editor: refused by the
 *      chart's `….connect.meshgate.io` entry with meshgate's message; into the app container, and as one of
 *      config.access.debuggers into the proxy: admitted, so the apiserver goes on to dial the (kwok) kubelet — and
 *      the debugger's exec leaves a MeshContainerDebug Event on the pod; `kubectl port-forward` is not judged. And the
 *      fact the decision rests on: a ValidatingAdmissionPolicy does see CONNECT pods/exec on 1.34.
 *   §2 the istio/gateway chart's pod (injected with istiod's gateway template): `kubectl debug` adding an ephemeral
 *      container (pods/ephemeralcontainers UPDATE) is refused (gateway_shared), with --target=istio-proxy too.
 *   §6 a namespace admin who may edit their own Namespace cannot remove its opt-in label, nor take a guarded ambient
 *      namespace out of ambient (istio.io/dataplane-mode removed or changed); enforcement.admins can.
 *   §8 an UPDATE setting ambient.istio.io/redirection on an existing pod: refused for the pod's editor and for
 *      istio-cni's account with a token of another node; admitted for istio-cni on the pod's node.
 * kwok nodes run no containers: admission runs before the apiserver dials the kubelet, so "admitted" shows as the
 * apiserver's own error about reaching the node, never meshgate's.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './harness/index.ts';
import { installChart, serveChart } from './harness/suite.ts';
import { installIstioGateway, startMeshedCluster } from './harness/clusters.ts';
import {
  EDIT_OWN_NAMESPACE,
  grantClusterRole,
  grantRole,
  impersonate,
  NODE_CLAIM,
  outcome,
  serviceAccount,
  type Identity,
} from './impersonate.ts';
import { createNamespace, names, restrictedPod } from './meshgate.ts';
import { shared } from './harness/shared.ts';

const NS = 'meshgate';
const SHOP = 'shop';
const AMBIENT = 'ambient-shop';
const EDITOR: Identity = { user: 'alice' };
const TEAM: Identity = { user: 'team-admin' };
const ONCALL = 'oncall@example.com';
const CNI = serviceAccount('istio-system', 'istio-cni');
const REDIRECTION = 'ambient.istio.io/redirection';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const kubectl = async (...argv: string[]) => {
  const r = await s.cp.kubectl(argv, { timeoutMs: 60_000 });
  return `${r.stdout}${r.stderr}`.trim();
};
/** `kubectl exec` as `who` (a user, or a user in a group), with the apiserver's answer. */
const exec = (who: string[], pod: string, container: string) =>
  kubectl('exec', '-n', SHOP, pod, '-c', container, ...who, '--', 'sh', '-c', 'id');
const as = (i: Identity) => ['--as', i.user, ...(i.group ? ['--as-group', i.group] : [])];
const MESHGATE_REFUSAL = /admission webhook "[a-z-]+\.connect\.meshgate\.io" denied the request: meshgate: /;
/**
 * Admitted: the apiserver went on to the pod's node. kwok serves the kubelet's exec endpoint and answers that it has
 * nothing to run (kwok's ClusterExec), which is the kubelet step reached; a node without one fails to dial.
 */
const REACHED_KUBELET = /no exec found for container|error dialing backend|dial tcp|connection refused/i;

/**
 * The cluster this file's tests share: Istio's real injector, the chart at enforce with ambient on and its debuggers,
 * meshgate's server in this process behind the chart's webhooks, and shop/web injected by Istio, adjusted by meshgate.
 */
const s = shared(async (stopLater) => {
  const { cp, core } = await startMeshedCluster(stopLater, { 'node-a': true });
  const config = {
    enforcement: { default: 'enforce' },
    access: { debuggers: { users: [ONCALL], groups: ['system:masters'] } },
    ambient: { enabled: true },
  };
  await installChart(cp, NS, '--set-json', `config=${JSON.stringify(config)}`);
  stopLater((await serveChart(cp, NS)).server);

  // shop: Istio injects its pods (sidecar mode), meshgate guards them at enforce; alice edits it (ClusterRole edit).
  await createNamespace(cp, SHOP, { 'istio-injection': 'enabled' });
  await grantRole(cp.kc, SHOP, 'alice-edit', { clusterRole: 'edit' }, EDITOR);
  await grantClusterRole(
    cp.kc,
    'oncall-exec',
    [{ apiGroups: [''], resources: ['pods', 'pods/exec'], verbs: ['get', 'create'] }],
    {
      user: ONCALL,
    },
  );
  // istio-cni's ClusterRole (istio-cni chart): pods get/list/watch, pods/status patch (it annotates through status).
  await grantClusterRole(
    cp.kc,
    'istio-cni',
    [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch', 'update'] },
    ],
    CNI,
  );
  // Webhook configurations take a moment to be in force in the apiserver: until both are, delete and retry.
  const web = await waitFor('shop/web admitted: injected by Istio, adjusted by meshgate', async () => {
    const p = await core.createNamespacedPod({ namespace: SHOP, body: restrictedPod('web') }).catch(() => undefined);
    // Istio 1.27 injects its proxy as a native sidecar (an init container that keeps running) on 1.34 kubelets.
    if (p?.metadata?.labels?.['meshgate.io/redirect'] && names(p).init.includes('istio-proxy')) return p;
    if (p) await core.deleteNamespacedPod({ name: 'web', namespace: SHOP, gracePeriodSeconds: 0 });
    await waitFor('shop/web gone', async () =>
      core.readNamespacedPod({ name: 'web', namespace: SHOP }).then(
        () => false,
        () => true,
      ),
    );
    return undefined;
  });
  expect(names(web)).toEqual({ init: ['istio-validation', 'istio-proxy'], containers: ['app'] });
  await waitFor('shop/web bound and running on node-a', async () => {
    const p = await core.readNamespacedPod({ name: 'web', namespace: SHOP });
    return p.spec?.nodeName === 'node-a' && p.status?.phase === 'Running';
  });
  return { cp, core, web };
}, 600_000);

describe('§1 kubectl exec and attach into the mesh’s containers', () => {
  it("the namespace's editor: exec into istio-proxy refused with meshgate's reason; into the app admitted", async () => {
    const refused = await exec(as(EDITOR), 'web', 'istio-proxy');
    expect(refused).toMatch(MESHGATE_REFUSAL);
    expect(refused).toContain(
      "kubectl exec into container istio-proxy of pod shop/web (the mesh's proxy) is refused: what it runs would run as " +
        "the mesh's container",
    );
    expect(refused).toContain('Only group system:masters or user oncall@example.com may (alice may not)');
    expect(refused).toContain('[mesh_container_access]');
    const app = await exec(as(EDITOR), 'web', 'app');
    expect(app).not.toMatch(MESHGATE_REFUSAL);
    expect(app).toMatch(REACHED_KUBELET);
    console.log(`exec into app as alice (admitted, then the kubelet step): ${app}`);
  });

  it('attach into istio-proxy refused the same way; port-forward is not judged', async () => {
    const attach = await kubectl('attach', '-n', SHOP, 'web', '-c', 'istio-proxy', ...as(EDITOR));
    expect(attach).toMatch(MESHGATE_REFUSAL);
    expect(attach).toContain('kubectl attach into container istio-proxy of pod shop/web');
    // kubectl port-forward upgrades its connection at once and then waits: stopped after a few seconds.
    const forward = await s.cp.kubectl(['port-forward', '-n', SHOP, 'pod/web', '15000:15000', ...as(EDITOR)], {
      timeoutMs: 6_000,
    });
    const said = `${forward.stdout}${forward.stderr}`;
    console.log(`kubectl port-forward as alice: ${said.trim()}`);
    expect(said).not.toMatch(/meshgate|denied|forbidden/i);
    expect(said).toContain('Forwarding from 127.0.0.1:15000');
  });

  it('one of access.debuggers: admitted into istio-proxy (the kubelet step), and the exec is an Event on the pod', async () => {
    for (const who of [
      ['--as', ONCALL],
      ['--as', 'root', '--as-group', 'system:masters'],
    ]) {
      const r = await exec(who, 'web', 'istio-proxy');
      expect(r).not.toMatch(MESHGATE_REFUSAL);
      expect(r).toMatch(REACHED_KUBELET);
    }
    const events = await waitFor('the MeshContainerDebug Events on shop/web', async () => {
      const items = (
        await s.core.listNamespacedEvent({ namespace: SHOP, fieldSelector: 'involvedObject.name=web' })
      ).items.filter((e) => e.reason === 'MeshContainerDebug');
      return items.length >= 2 ? items : undefined;
    });
    expect(events.map((e) => e.message).sort()).toEqual([
      'oncall@example.com: kubectl exec into container istio-proxy: sh -c id (admitted: access.debuggers) [mesh_container_debug]',
      'root: kubectl exec into container istio-proxy: sh -c id (admitted: access.debuggers) [mesh_container_debug]',
    ]);
    const refusedEvents = (
      await s.core.listNamespacedEvent({ namespace: SHOP, fieldSelector: 'involvedObject.name=web' })
    ).items.filter((e) => e.reason === 'MeshContainerAccessRefused');
    expect(refusedEvents.map((e) => e.message)).toContain(
      'alice: kubectl exec into container istio-proxy: sh -c id (refused) [mesh_container_access]',
    );
  });

  it('a ValidatingAdmissionPolicy sees CONNECT pods/exec on this apiserver (1.34)', async () => {
    // The fact behind docs/security.md's choice of a webhook entry over a policy: both are possible.
    const api = s.cp.kc.makeApiClient(AdmissionregistrationV1Api);
    await api.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: 'probe-connect' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              { apiGroups: [''], apiVersions: ['v1'], operations: ['CONNECT'], resources: ['pods/exec'] },
            ],
          },
          validations: [
            { expression: "object.?container.orValue('') != 'app'", message: 'the probe policy saw the CONNECT' },
          ],
        },
      },
    });
    await api.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name: 'probe-connect' },
        spec: {
          policyName: 'probe-connect',
          validationActions: ['Deny'],
          matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': SHOP } } },
        },
      },
    });
    const seen = await waitFor('the probe policy in force', async () => {
      const r = await exec(as(EDITOR), 'web', 'app');
      return r.includes('the probe policy saw the CONNECT') ? r : undefined;
    });
    expect(seen).toContain('ValidatingAdmissionPolicy');
    await api.deleteValidatingAdmissionPolicyBinding({ name: 'probe-connect' });
    await api.deleteValidatingAdmissionPolicy({ name: 'probe-connect' });
  });
});

describe('§2 the istio/gateway chart’s pod and ephemeral containers', () => {
  let gateway: string;
  beforeAll(async () => {
    const gw = await installIstioGateway(s.cp, true);
    expect(gw.spec!.containers.map((c) => c.name)).toEqual(['istio-proxy']);
    expect(gw.spec!.containers[0].args?.slice(0, 2)).toEqual(['proxy', 'router']);
    gateway = gw.metadata!.name!;
  }, 300_000);

  it.each([
    ['a debug container', ['--image=busybox', '-c', 'dbg']],
    ['one as the proxy UID', ['--image=busybox', '-c', 'dbg-uid', '--custom', 'CUSTOM']],
    ['one targeting the proxy', ['--image=busybox', '-c', 'dbg-target', '--target=istio-proxy']],
  ])('kubectl debug adds %s: refused, and the gateway stays alone', async (_n, args) => {
    const custom = join(s.cp.dir, 'debug-as-proxy.json');
    writeFileSync(custom, JSON.stringify({ securityContext: { runAsUser: 1337 } }));
    const argv = args.map((a) => (a === 'CUSTOM' ? custom : a));
    const r = await s.cp.kubectl(['debug', '-n', 'istio-ingress', `pod/${gateway}`, ...argv, '--', 'sleep', '1'], {
      timeoutMs: 60_000,
    });
    const out = `${r.stdout}${r.stderr}`;
    expect(r.code, out).not.toBe(0);
    expect(out).toMatch(
      /denied the request: meshgate: (after this update: the pod runs the proxy as a gateway beside|ephemeral container dbg-target targets istio-proxy)/,
    );
    const pod = await s.core.readNamespacedPod({ name: gateway, namespace: 'istio-ingress' });
    expect(pod.spec?.ephemeralContainers ?? []).toEqual([]);
  });
});

describe('§6 a namespace admin cannot switch a guarded namespace off', () => {
  const api = (who: Identity) => impersonate(s.cp.kc, who).makeApiClient(CoreV1Api);
  const label = (who: Identity, ns: string, labels: Record<string, string | null>) =>
    outcome(api(who).patchNamespace({ name: ns, body: { metadata: { labels } } }, merge));

  beforeAll(async () => {
    await createNamespace(s.cp, 'team-a', { 'istio-injection': 'enabled' });
    await createNamespace(s.cp, AMBIENT, { 'meshgate.io/inject': 'enabled', 'istio.io/dataplane-mode': 'ambient' });
    for (const ns of ['team-a', AMBIENT])
      await grantRole(s.cp.kc, ns, 'edit-own-namespace', { rules: EDIT_OWN_NAMESPACE }, TEAM);
  });

  it('removing or changing the opt-in label: refused to the namespace admin, through status too', async () => {
    const off = await label(TEAM, 'team-a', { 'istio-injection': null });
    expect(off).toContain('HTTP 403');
    expect(off).toContain(
      'only group system:masters or break-glass account meshgate/meshgate-break-glass may take namespace team-a out of the namespaces meshgate guards (team-admin may not): ' +
        'after this change no meshgate webhook selects it (labels istio-injection, istio.io/rev, meshgate.io/inject)',
    );
    expect(await label(TEAM, 'team-a', { 'istio-injection': 'disabled' })).toContain(
      'out of the namespaces meshgate guards',
    );
    const status = await outcome(
      api(TEAM).patchNamespaceStatus(
        { name: 'team-a', body: { metadata: { labels: { 'istio-injection': null } } } },
        merge,
      ),
    );
    expect(status).toContain('out of the namespaces meshgate guards');
    // Moving between opt-in labels keeps it guarded; other labels pass.
    expect(await label(TEAM, 'team-a', { 'meshgate.io/inject': 'enabled' })).toBe('allowed');
    expect(await label(TEAM, 'team-a', { 'istio-injection': null })).toBe('allowed');
    expect(await label(TEAM, 'team-a', { team: 'a' })).toBe('allowed');
  });

  it('taking a guarded ambient namespace out of ambient: refused to the namespace admin', async () => {
    for (const value of [null, 'none']) {
      const r = await label(TEAM, AMBIENT, { 'istio.io/dataplane-mode': value });
      expect(r).toContain(
        `only group system:masters or break-glass account meshgate/meshgate-break-glass may take guarded namespace ${AMBIENT} out of Istio ambient mode (team-admin may not)`,
      );
    }
  });

  it('enforcement.admins (system:masters) may', async () => {
    const admin = { user: 'root', group: 'system:masters' };
    expect(await label(admin, AMBIENT, { 'istio.io/dataplane-mode': null })).toBe('allowed');
    expect(await label(admin, 'team-a', { 'meshgate.io/inject': null })).toBe('allowed');
  });
});

describe('§8 ambient.istio.io/redirection on an existing pod', () => {
  const annotate = (who: Identity, node: string | undefined, value: string | null, status = false) => {
    const c = impersonate(s.cp.kc, who, node).makeApiClient(CoreV1Api);
    const body = { metadata: { annotations: { [REDIRECTION]: value } } };
    return outcome(
      status
        ? c.patchNamespacedPodStatus({ name: 'web', namespace: SHOP, body }, merge)
        : c.patchNamespacedPod({ name: 'web', namespace: SHOP, body }, merge),
    );
  };

  it('the pod’s editor, or istio-cni with a token of another node: refused', async () => {
    const alice = await annotate(EDITOR, undefined, 'enabled');
    expect(alice).toContain('[ambient_redirection_changed]');
    expect(alice).toContain('alice is not istio-cni (system:serviceaccount:istio-system:istio-cni)');
    expect(await annotate(CNI, 'node-b', 'enabled')).toContain(
      "the request's token is bound to node node-b, not the pod's node node-a",
    );
  });

  it("istio-cni's node agent on the pod's node: admitted (pods, and pods/status as Istio 1.27 writes it)", async () => {
    expect(await annotate(CNI, 'node-a', 'enabled')).toBe('allowed');
    expect(await annotate(CNI, 'node-a', null, true)).toBe('allowed');
    const p = await s.core.readNamespacedPod({ name: 'web', namespace: SHOP });
    expect(p.metadata?.annotations?.[REDIRECTION]).toBeUndefined();
    expect(NODE_CLAIM).toBe('authentication.kubernetes.io/node-name');
  });
});
