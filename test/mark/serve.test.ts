/**
 * The admission mark in the running webhook: keys from a directory (the mounted Secret), readiness waiting for them,
 * the two admission scopes as routes (a mark on /mutate, none on /mutate/selected-pods), and the serve flags.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/contract/pod.ts';
import type { RunningServer } from '../../src/server/start.ts';
import { verifyMark } from '../../src/mark/mark.ts';
import { podReview } from '../http/helpers.ts';
import { request, serve } from '../tls/helpers.ts';
import { RING, keyDir } from '../support/mark.ts';

const running: RunningServer[] = [];
const dirs: Array<ReturnType<typeof keyDir>> = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.shutdown();
  for (const d of dirs.splice(0)) d.cleanup();
});

async function start(files?: Record<string, Buffer | string>) {
  const d = keyDir(files);
  dirs.push(d);
  const server = await serve({ markKeys: { dir: d.dir } });
  running.push(server);
  return server;
}

/** The pod as `path` patched it, and the mark the patch set (if any). */
async function post(server: RunningServer, path: string) {
  const review = podReview('u1', { nodeName: 'n1' });
  const res = await request(server.port, { ca: server.ca, method: 'POST', path, body: JSON.stringify(review) });
  expect(res.status).toBe(200);
  const ops = JSON.parse(Buffer.from(JSON.parse(res.body).response.patch, 'base64').toString()) as Operation[];
  const pod = jsonpatch.applyPatch(structuredClone(review.request.object), ops, true, false).newDocument as Pod;
  const mark = ops.find((o) => o.path === '/metadata/annotations/meshgate.io~1admitted');
  return { pod, mark: mark && 'value' in mark ? (mark.value as string) : undefined };
}

describe('serve with --mark-key-dir', () => {
  it('marks what /mutate admits, not what /mutate/selected-pods admits', async () => {
    const server = await start();
    expect((await request(server.port, { ca: server.ca, path: '/readyz' })).status).toBe(200);
    const marked = await post(server, '/mutate');
    const now = Math.floor(Date.now() / 1000);
    expect(verifyMark(RING, marked.mark!, 'demo', now)).toMatchObject({ ok: true });
    const selected = await post(server, '/mutate/selected-pods');
    expect(selected.mark).toBeUndefined();
    const validate = async (path: string, pod: Pod) => {
      const review = podReview('u2');
      review.request.object = pod;
      const res = await request(server.port, { ca: server.ca, method: 'POST', path, body: JSON.stringify(review) });
      return JSON.parse(res.body).response;
    };
    expect(await validate('/validate', marked.pod)).toMatchObject({ allowed: true });
    expect(await validate('/validate/selected-pods', selected.pod)).toMatchObject({ allowed: true });
    // The marked pod's mark, brought through a selected-pods route, is refused.
    const brought = {
      ...selected.pod,
      metadata: { ...selected.pod.metadata, annotations: marked.pod.metadata!.annotations },
    };
    expect(await validate('/validate/selected-pods', brought)).toMatchObject({
      allowed: false,
      status: { message: expect.stringMatching(/\[admission_mark_invalid\]$/) },
    });
  });

  it('is not ready while the directory holds no key, and says why', async () => {
    const server = await start({});
    const res = await request(server.port, { ca: server.ca, path: '/readyz' });
    expect(res.status).toBe(503);
    expect(res.body).toMatch(/no admission mark key: .*key does not exist/);
  });
});

describe('serve: mark flags', () => {
  const ROOT = fileURLToPath(new URL('../../', import.meta.url));
  it.each<[string[], RegExp]>([
    [['--mark-key-secret', 'meshgate-admission-mark'], /--mark-key-secret needs --mark-key-dir/],
    [
      ['--mark-key-dir', '/tmp/x', '--mark-key-secret', 'Bad_Name'],
      /--mark-key-secret: "Bad_Name" is not a Secret name/,
    ],
    [
      ['--mark-key-dir', '/tmp/x', '--mark-key-secret', 'meshgate-admission-mark'],
      /--cert-secret, --webhook-config and --mark-key-secret need cluster credentials/,
    ],
  ])('%j → exit 2', (flags, message) => {
    const r = spawnSync(
      join(ROOT, 'node_modules/.bin/node'),
      [join(ROOT, 'bin/meshgate.js'), 'serve', '--mesh', 'istio', '--port', '0', '--host', '127.0.0.1', ...flags],
      {
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, KUBERNETES_SERVICE_HOST: '', KUBECONFIG: '/nonexistent' },
      },
    );
    expect(r.stderr).toMatch(message);
    expect(r.status).toBe(2);
  });
});
