/**
 * An audit signal that counts pods, not calls (issue 34 §4): each pod admitted at audit costs the apiserver several
 * calls to meshgate — mutate, its reinvocation, validate, the binding — all of which meshgate_admission_decisions_total
 * counts; meshgate_audited_pods_total counts the pod once, with one reason. Through the real app and handlers, each
 * call as the apiserver makes it (the object the next webhook sees is the previous answer's patch applied).
 */
import { describe, expect, it } from 'vitest';
import type { createMetrics } from '../../src/server/metrics.ts';
import {
  applyResponsePatch,
  bindingReview,
  buildTestApp,
  podCreateReview,
  post,
  type ReviewResponse,
  type TestApp,
} from './helpers.ts';

const pod = (name: string, spec: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'demo', ...(labels ? { labels } : {}) },
  spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec },
});

async function counter(metrics: ReturnType<typeof createMetrics>, name: string) {
  const m = (await metrics.registry.getMetricsAsJSON()).find((x) => x.name === name);
  return (m?.values ?? []) as Array<{ value: number; labels: Record<string, string> }>;
}

/** Creates a pod through the audit routes as the apiserver would; returns the object admitted. */
async function create(app: TestApp['app'], name: string, spec: Record<string, unknown>, dry = false) {
  const extra = dry ? { dryRun: true } : {};
  let object: unknown = pod(name, spec);
  for (const uid of ['m', 'm-again']) {
    const res = (
      await post(app, '/mutate/audit', podCreateReview(`${name}-${uid}`, object, extra))
    ).json() as ReviewResponse;
    expect(res.response.allowed).toBe(true);
    object = applyResponsePatch(object, res);
  }
  const v = (await post(app, '/validate/audit', podCreateReview(`${name}-v`, object, extra))).json() as ReviewResponse;
  expect(v.response.allowed).toBe(true);
  if (!dry) await post(app, '/validate/audit', bindingReview(`${name}-b`, name, 'n1'));
  return { object, validated: v };
}

describe('meshgate_audited_pods_total', () => {
  it('counts 6 pods admitted at audit once each, with the reason their mutation recorded; the calls are more', async () => {
    const { app, metrics } = buildTestApp();
    for (let i = 0; i < 6; i++) {
      const { validated } = await create(app, `w${i}`, { hostNetwork: true });
      // The validating webhook reports the pod's one reason.
      expect(validated.response.auditAnnotations).toEqual({
        'meshgate.io/reason': 'host_network',
        'meshgate.io/would-deny': 'audit',
      });
    }
    // A dry run is judged, not counted; a pod audit admits without a refusal is not counted either.
    await create(app, 'dry', { hostNetwork: true }, true);
    await create(app, 'fine', {});
    expect(await counter(metrics, 'meshgate_audited_pods_total')).toEqual([
      { value: 6, labels: { level: 'audit', reason: 'host_network' } },
    ]);
    const calls = (await counter(metrics, 'meshgate_admission_decisions_total'))
      .filter((v) => v.labels.decision === 'audit')
      .reduce((n, v) => n + v.value, 0);
    expect(calls).toBeGreaterThanOrEqual(18);
    console.log(`6 pods at audit: ${calls} audited calls, meshgate_audited_pods_total 6`);
  });

  it('a pod the mutation refused, left uninjected, keeps that one reason at validation (not proxy_missing)', async () => {
    const { app, metrics } = buildTestApp();
    // The custom profile injects; a pod bound to an unverified node is refused by the mutation at warn, so the
    // validating webhook sees it without a proxy.
    let object: unknown = pod('bound', { nodeName: 'n2' });
    const m = (await post(app, '/mutate/warn', podCreateReview('m', object))).json() as ReviewResponse;
    object = applyResponsePatch(object, m);
    const v = (await post(app, '/validate/warn', podCreateReview('v', object))).json() as ReviewResponse;
    expect(v.response.auditAnnotations?.['meshgate.io/reason']).toBe('node_unverified');
    // Its warning came with the mutation already: the validation adds none of its own for the same pod.
    expect(v.response.warnings).toBeUndefined();
    expect(await counter(metrics, 'meshgate_audited_pods_total')).toEqual([
      { value: 1, labels: { level: 'warn', reason: 'node_unverified' } },
    ]);
  });

  it('a record the pod brings (copied from a running pod) is removed by the mutation when meshgate finds nothing', async () => {
    const { app, metrics } = buildTestApp();
    const copied = pod('copied', {}, { 'meshgate.io/would-deny': 'audit' });
    (copied.metadata as Record<string, unknown>).annotations = { 'meshgate.io/would-deny': 'host_network: copied' };
    for (const path of ['/mutate', '/mutate/audit']) {
      const res = (await post(app, path, podCreateReview('m', copied))).json() as ReviewResponse;
      const out = applyResponsePatch(copied, res) as { metadata: Record<string, Record<string, string>> };
      expect(out.metadata.labels['meshgate.io/would-deny'], path).toBeUndefined();
      expect(out.metadata.annotations['meshgate.io/would-deny'], path).toBeUndefined();
      const v = (
        await post(app, path.replace('mutate', 'validate'), podCreateReview('v', out))
      ).json() as ReviewResponse;
      expect(v.response.auditAnnotations?.['meshgate.io/would-deny'], path).toBeUndefined();
    }
    expect(await counter(metrics, 'meshgate_audited_pods_total')).toEqual([]);
  });
});
