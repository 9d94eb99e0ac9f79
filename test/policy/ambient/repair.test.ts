/**
 * Repair of an ambient pod whose validator refused to start it (issue 26 item 5): the ambient validator is the
 * validator by name (config validator.name) and exits 42 with the same JSON termination message, so the repair
 * controller's decision (and the quarantine, which counts the same failures per node) needs nothing new. The message
 * here is the real CLI's: `validate-redirect --ambient` run in this test's network namespace, where nothing captures
 * 127.0.0.2:53.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../../src/cli/io.ts';
import { validateRedirectCommand } from '../../../src/cli/validate-redirect.ts';
import { decideRepair } from '../../../src/repair/failed/decide.ts';
import { VALIDATION_FAILURES } from '../../../src/repair/failed/failures.ts';
import { cfg } from '../mutate/fixtures.ts';
import { ISO_T0, markFor, RING } from '../../support/mark.ts';

describe('an ambient pod whose validator failed', () => {
  it('exits 42 with reason ambient_not_captured, and the repair controller deletes it with that reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-ambient-repair-'));
    const log = join(dir, 'termination-log');
    writeFileSync(log, '');
    const io = memoryIO('', { NODE_NAME: 'node-a' });
    const code = await validateRedirectCommand(['--ambient', '--timeout', '300ms', '--termination-log', log], io);
    const message = readFileSync(log, 'utf8');
    rmSync(dir, { recursive: true, force: true });
    expect(code, io.err).toBe(42);
    expect(io.err).toMatch(/^meshgate validate-redirect: FAILED ambient_not_captured \(exit 42\)/);
    expect(JSON.parse(message)).toMatchObject({
      reason: 'ambient_not_captured',
      node: 'node-a',
      probeAddress: '127.0.0.2:53',
      probeScope: 'ambient',
    });

    const config = cfg('istio', { ambient: { enabled: true } });
    const validator = { name: config.config.validator.name, failures: VALIDATION_FAILURES.istio };
    const pod = {
      metadata: {
        name: 'web-1',
        namespace: 'demo',
        uid: 'uid-1',
        creationTimestamp: ISO_T0,
        labels: { 'meshgate.io/redirect': 'cni' },
        annotations: { 'meshgate.io/admitted': markFor('demo') },
        ownerReferences: [{ controller: true, kind: 'ReplicaSet', name: 'web' }],
      },
      spec: { nodeName: 'node-a' },
      status: {
        initContainerStatuses: [{ name: 'istio-validation', lastState: { terminated: { exitCode: 42, message } } }],
      },
    };
    const action = decideRepair(pod, validator, { excludedNamespaces: ['meshgate'], keys: RING });
    expect(action).toMatchObject({
      action: 'delete',
      why: 'validation_failed',
      reason: 'ambient_not_captured',
      node: 'node-a',
    });
  });
});
