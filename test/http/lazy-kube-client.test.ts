// The embedded default (static node facts) must not load @kubernetes/client-node: it is most of an idle
// server's memory (src/kube/client.ts). A child process records every module it resolves, starts the server on
// static facts, answers one review, and reports which client-node modules it loaded; then again with a kubeconfig.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

const CHILD = `
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    if (r.url.includes('/@kubernetes/client-node/')) loaded.add(r.url);
    return r;
  },
});
const { startServer } = await import(${JSON.stringify(`${ROOT}src/server/start.ts`)});
const { loadKubeConfig } = await import(${JSON.stringify(`${ROOT}src/kube/client.ts`)});
const { testConfig } = await import(${JSON.stringify(`${ROOT}test/support/config.ts`)});
const { nodeFactsFromState } = await import(${JSON.stringify(`${ROOT}src/facts/node-state.ts`)});
const pino = (await import('pino')).default;
const kubeconfig = process.argv[1]; // node -e: argv[1] is the first argument
const kc = await loadKubeConfig({ kubeconfig, inCluster: true });
const server = await startServer({
  config: testConfig('custom'),
  port: 0,
  host: '127.0.0.1',
  tlsSans: ['127.0.0.1'],
  ...(kc ? { kc } : { nodeState: nodeFactsFromState({ nodes: { n1: { verified: true } } }, 'test') }),
  drainSeconds: 0,
  logger: pino({ level: 'silent' }),
});
await server.shutdown();
process.stdout.write(JSON.stringify({ withCredentials: kc !== undefined, loaded: loaded.size }));
process.exit(0);
`;

function run(kubeconfig?: string): { withCredentials: boolean; loaded: number } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, ...(kubeconfig ? [kubeconfig] : [])], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    // No in-cluster token file exists here, and KUBERNETES_SERVICE_HOST must not matter either.
    env: { ...process.env, KUBERNETES_SERVICE_HOST: '127.0.0.1' },
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('the Kubernetes client is loaded only with cluster credentials', () => {
  it('static node facts: no @kubernetes/client-node module is loaded', () => {
    expect(run()).toEqual({ withCredentials: false, loaded: 0 });
  });

  it('with a kubeconfig: the client is loaded (the check above can see it)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-lazy-'));
    const path = join(dir, 'kubeconfig');
    // An unreachable-by-design loopback port: the caches retry in the background; shutdown stops them.
    writeFileSync(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    const r = run(path);
    expect(r.withCredentials).toBe(true);
    expect(r.loaded).toBeGreaterThan(0);
  });
});
