/**
 * The quarantine mark as the webhook's node facts read it: a withdrawn node is not verified (`node_quarantined`,
 * with the failing pods in the message) even if its agent's condition still says True — the agent's next publish
 * cannot make it verified while the mark stands. And the mark's own encoding: bounded, and unreadable = withdrawn.
 */
import { describe, expect, it } from 'vitest';
import { factFromNode } from '../../src/facts/node-facts.ts';
import {
  describeMark,
  MAX_MARK_FAILURES,
  QUARANTINE_ANNOTATION,
  readHistory,
  readMark,
  writeHistory,
  writeMark,
  type QuarantineMark,
} from '../../src/node/quarantine.ts';

const evidence = JSON.stringify({
  runtime: 'containerd',
  pluginType: 'istio-cni',
  file: '10-calico.conflist',
  plugins: ['calico', 'istio-cni'],
  candidates: [],
  checkedAt: '2026-11-23T00:00:00Z',
});
const MARK: QuarantineMark = {
  since: '2026-11-23T00:06:00.000Z',
  lastFailureAt: '2026-11-23T00:05:50.000Z',
  holdUntil: '2026-11-23T00:11:00.000Z',
  hold: 'hold_off',
  level: 0,
  taint: false,
  failureCount: 4,
  failures: [
    { pod: 'shop/web-1', reason: 'not_redirected', at: '2026-11-23T00:05:10.000Z' },
    { pod: 'shop/web-2', reason: 'not_redirected', at: '2026-11-23T00:05:30.000Z' },
    { pod: 'shop/api-1', reason: 'istio_validation_failed', at: '2026-11-23T00:05:40.000Z' },
    { pod: 'shop/api-2', reason: 'timeout', at: '2026-11-23T00:05:50.000Z' },
  ],
};
const verifiedNode = (annotations: Record<string, string> = {}) => ({
  metadata: {
    name: 'n1',
    labels: { 'meshgate.io/cni-verified': 'true' },
    annotations: { 'meshgate.io/cni-evidence': evidence, ...annotations },
  },
  status: {
    conditions: [
      {
        type: 'MeshCNIVerified',
        status: 'True',
        reason: 'verified',
        message: 'ok',
        lastHeartbeatTime: '2026-11-23T00:09:00Z',
      },
    ],
    nodeInfo: { kubeletVersion: 'v1.34.2' },
  },
});
const expect_ = { pluginType: 'istio-cni', maxVerdictAgeMs: 20 * 60_000 };
const NOW = Date.parse('2026-11-23T00:10:00Z');

describe('node facts and the quarantine mark', () => {
  it('a node verified by its agent but carrying the mark is not verified: node_quarantined, naming the failing pods', () => {
    expect(factFromNode(verifiedNode(), expect_, NOW).verified).toBe(true);
    const f = factFromNode(verifiedNode({ [QUARANTINE_ANNOTATION]: writeMark(MARK) }), expect_, NOW);
    expect(f).toMatchObject({ verified: false, reason: 'node_quarantined', kubeletVersion: 'v1.34.2' });
    expect(f.message).toMatch(
      /shop\/web-2: not_redirected, shop\/api-1: istio_validation_failed, shop\/api-2: timeout, … 4 in all/,
    );
    expect(f.message).toContain('held until 2026-11-23T00:11:00.000Z');
  });

  it.each([
    ['not JSON', 'x'],
    ['JSON without times', '{"since":"yesterday"}'],
    ['too long', `{"x":"${'a'.repeat(20_000)}"}`],
    ['empty', ''],
  ])('an unreadable mark (%s) still unverifies the node', (_n, raw) => {
    const f = factFromNode(verifiedNode({ [QUARANTINE_ANNOTATION]: raw }), expect_, NOW);
    expect(f).toMatchObject({ verified: false, reason: 'node_quarantined' });
    expect(readMark(raw)).toMatchObject({ ok: false });
  });

  it('the agent’s own unverified verdict keeps its reason under a mark', () => {
    const n = verifiedNode({ [QUARANTINE_ANNOTATION]: writeMark(MARK) });
    n.status.conditions[0] = {
      ...n.status.conditions[0],
      status: 'False',
      reason: 'mesh_plugin_missing',
      message: 'no istio-cni',
    };
    expect(factFromNode(n, expect_, NOW)).toMatchObject({ verified: false, reason: 'mesh_plugin_missing' });
  });

  it('the mark round-trips and keeps only the latest failures; the history keeps the times', () => {
    const many = {
      ...MARK,
      failures: Array.from({ length: 25 }, (_, i) => ({
        pod: `ns/p-${i}`,
        reason: 'timeout',
        at: '2026-11-23T00:05:00.000Z',
      })),
      failureCount: 25,
    };
    const read = readMark(writeMark(many));
    expect(read).toMatchObject({ ok: true, mark: { failureCount: 25, since: MARK.since } });
    expect(read?.ok && read.mark.failures.map((f) => f.pod)).toEqual(
      Array.from({ length: MAX_MARK_FAILURES }, (_, i) => `ns/p-${25 - MAX_MARK_FAILURES + i}`),
    );
    expect(readMark(undefined)).toBeUndefined();
    const h = {
      withdrawals: [Date.parse('2026-11-23T00:06:00Z'), Date.parse('2026-11-23T00:01:00Z')],
      clearedThrough: Date.parse('2026-11-23T00:05:50Z'),
    };
    expect(readHistory(writeHistory(h))).toEqual({
      withdrawals: [...h.withdrawals].sort(),
      clearedThrough: h.clearedThrough,
    });
    expect(readHistory('garbage')).toEqual({ withdrawals: [] });
    expect(describeMark({ ok: true, mark: { ...MARK, hold: 'flap_limit' } })).toContain(
      'withdrawn too often within the hour',
    );
  });
});
