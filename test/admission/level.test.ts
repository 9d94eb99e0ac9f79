/**
 * Enforcement levels (issue 23): the same review through the enforce, warn and audit routes. Enforce refuses; warn
 * and audit admit the pod, keep the would-be refusal's reason (metrics, audit log) and record it on the pod (the
 * mutating webhook), warn also as an admission warning. Patches are applied with fast-json-patch, as the apiserver
 * does.
 */
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { admissionRoutes, ROUTES, routePath } from '../../src/admission/handlers.ts';
import { readWouldDeny, WOULD_DENY_ANNOTATION, WOULD_DENY_LABEL } from '../../src/admission/level.ts';
import { type AdmissionRequest, encodeResponse, type Verdict } from '../../src/admission/review.ts';
import type { Pod } from '../../src/contract/pod.ts';
import { cfg, pod, verified } from '../policy/mutate/fixtures.ts';

const routes = admissionRoutes({ config: cfg(), nodes: verified });

/** A pod bound to the unverified node: enforce's and warn's decision core refuses it (node_unverified). */
const refused = (labels?: Record<string, string>): Pod =>
  pod({ nodeName: 'bad' }, { name: 'w', namespace: 'demo', ...(labels ? { labels } : {}) });
/** A pod in the host network: refused at every level (host_network), whatever its node. */
const hostNetwork = (): Pod => pod({ hostNetwork: true }, { name: 'w', namespace: 'demo' });

function review(p: unknown): AdmissionRequest {
  return {
    uid: 'u',
    operation: 'CREATE',
    namespace: 'demo',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    object: p,
  };
}

const call = async (path: string, p: unknown): Promise<Verdict> => routes[path](review(p));

function applied(p: Pod, v: Verdict): Pod {
  if (v.kind !== 'patch') return p;
  return jsonpatch.applyPatch(structuredClone(p), structuredClone(v.ops) as jsonpatch.Operation[], true, false)
    .newDocument;
}

describe('the routes', () => {
  it('are one per kind, scope and level, each its own path', () => {
    const paths = ROUTES.map(routePath);
    expect(new Set(paths).size).toBe(15);
    expect(paths).toContain('/validate/workloads/audit');
    expect(paths).toContain('/mutate');
    expect(paths).toContain('/validate/selected-pods/audit');
    expect(Object.keys(routes).sort()).toEqual([...paths].sort());
  });
});

describe('enforcement levels', () => {
  it('enforce refuses', async () => {
    expect(await call('/mutate', refused())).toMatchObject({ kind: 'deny', reason: 'node_unverified' });
    // Not injected (the mutating webhook refused it), so the validating webhook finds no proxy.
    expect(await call('/validate', refused())).toMatchObject({ kind: 'deny', reason: 'proxy_missing' });
  });

  it('audit admits silently, keeps the reason and records it on the pod', async () => {
    const m = await call('/mutate/audit', hostNetwork());
    expect(m).toMatchObject({ kind: 'patch', reason: 'host_network', audited: { level: 'audit' } });
    expect(m.kind === 'patch' && m.warnings).toBeFalsy();
    const out = applied(hostNetwork(), m);
    expect(out.metadata?.labels?.[WOULD_DENY_LABEL]).toBe('audit');
    expect(out.metadata?.annotations?.[WOULD_DENY_ANNOTATION]).toMatch(/^host_network: hostNetwork: true shares/);
    // The pod is otherwise unchanged: meshgate admitted it as it came.
    expect(out.spec).toEqual(hostNetwork().spec);
    const v = await call('/validate/audit', out);
    expect(v).toMatchObject({ kind: 'allow', reason: 'host_network', audited: { level: 'audit' } });
    expect(encodeResponse('admission.k8s.io/v1', 'u', v).response).toMatchObject({
      allowed: true,
      auditAnnotations: { 'meshgate.io/reason': 'host_network', 'meshgate.io/would-deny': 'audit' },
    });
  });

  it('audit holds no pod (issue 34 §2): its node unverified or unknown, it gets the init container, unpinned', async () => {
    const bound = await call('/mutate/audit', refused());
    expect(bound).toMatchObject({ kind: 'patch', reason: 'audit_unpinned' });
    expect('audited' in bound && bound.audited).toBeFalsy();
    const nodeless = pod({}, { name: 'w', namespace: 'demo' });
    for (const [path, pinned] of [
      ['/mutate', true],
      ['/mutate/warn', true],
      ['/mutate/audit', false],
    ] as const) {
      const out = applied(nodeless, await call(path, nodeless));
      expect(out.spec.affinity?.nodeAffinity !== undefined, path).toBe(pinned);
      expect(
        out.spec.initContainers?.some((c) => c.securityContext?.capabilities?.add?.includes('NET_ADMIN')),
        path,
      ).toBe(!pinned);
      const v = await call(path.replace('mutate', 'validate'), out);
      expect(v.kind, `${path}: ${JSON.stringify(v)}`).toBe('allow');
    }
    // On a verified node, audit swaps as enforce does: no privileged container (what passes Pod Security).
    const onGood = pod({ nodeName: 'good' }, { name: 'w', namespace: 'demo' });
    const good = applied(onGood, await call('/mutate/audit', onGood));
    expect(good.spec.initContainers?.length).toBeGreaterThan(0);
    expect(good.spec.initContainers?.some((c) => c.securityContext?.capabilities?.add?.length)).toBe(false);
  });

  it('warn also returns the refusal as an admission warning', async () => {
    const m = await call('/mutate/warn', refused({ app: 'x' }));
    expect(m.kind === 'patch' && m.warnings?.join('\n')).toMatch(
      /node bad has no verified CNI chain .*\[node_unverified\] \(warn mode: admitted\)/,
    );
    expect(applied(refused({ app: 'x' }), m).metadata?.labels).toEqual({ app: 'x', [WOULD_DENY_LABEL]: 'warn' });
    const v = await call('/validate/selected-pods/warn', refused());
    expect(v).toMatchObject({ kind: 'allow', audited: { level: 'warn' } });
    expect(encodeResponse('admission.k8s.io/v1', 'u', v).response.warnings?.[0]).toMatch(
      /^meshgate: .*\(warn mode: admitted\)$/,
    );
  });

  it('what enforce admits passes every level unchanged', async () => {
    const ok = pod({ nodeName: 'good' }, { name: 'w', namespace: 'demo' });
    for (const path of ['/mutate', '/mutate/warn', '/mutate/audit']) {
      const v = await call(path, ok);
      expect(v.kind).toBe('patch');
      expect('audited' in v && v.audited).toBeFalsy();
    }
  });

  it('a long refusal is recorded cut to 1 KiB', async () => {
    const big = pod(
      { nodeName: 'bad' },
      {
        name: 'w',
        namespace: 'demo',
        annotations: {
          'meshgate.io/exclude-outbound-ports': Array.from({ length: 400 }, (_, i) => String(i + 1)).join(','),
        },
      },
    );
    const m = await call('/mutate/warn', big);
    const note = applied(big, m).metadata?.annotations?.[WOULD_DENY_ANNOTATION] ?? '';
    expect(note).not.toBe('');
    expect(note.length).toBeLessThanOrEqual(1024);
  });

  it('the record reads back as level, reason and message (check --audit, the repair controller’s Event)', async () => {
    const out = applied(refused(), await call('/mutate/warn', refused()));
    const w = readWouldDeny(out.metadata?.labels, out.metadata?.annotations);
    expect(w).toMatchObject({ level: 'warn', reason: 'node_unverified' });
    expect(w?.message).toMatch(/^node bad has no verified CNI chain/);
    expect(readWouldDeny({ [WOULD_DENY_LABEL]: 'audit' }, { [WOULD_DENY_ANNOTATION]: 'free text' })).toEqual({
      level: 'audit',
      reason: 'unknown',
      message: 'free text',
    });
    // Anything else is no record: an enforce label, or a label without its annotation.
    expect(readWouldDeny({ [WOULD_DENY_LABEL]: 'enforce' }, { [WOULD_DENY_ANNOTATION]: 'x: y' })).toBeUndefined();
    expect(readWouldDeny({ [WOULD_DENY_LABEL]: 'audit' }, {})).toBeUndefined();
    expect(readWouldDeny(undefined, undefined)).toBeUndefined();
  });
});
