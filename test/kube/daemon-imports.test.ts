// The daemons (webhook `serve`, `node-agent`, `repair-controller`) never load @kubernetes/client-node: it was 42–48
// MiB of RSS in each process, paid on every node by the agent (npm run bench -- --footprint). Two checks:
// - static: the import graph of src/, read by the TypeScript parser, from each daemon's command module through every
//   static and dynamic import, must not reach the package (only `import type` is erased from the JavaScript;
//   `import { type X }` still loads the module under verbatimModuleSyntax, so it counts);
// - at run time: a child process records every module it resolves, starts the webhook with cluster credentials
//   (its caches then run on meshgate's own client) and loads the agent's and the repair controller's modules.
// The CLI's `meshgate check` and `meshgate uninstall` keep the full client: the static check sees it, to prove it
// can see anything.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const CLIENT = '@kubernetes/client-node';
const DAEMONS = ['src/cli/serve.ts', 'src/cli/node-agent.ts', 'src/cli/repair-controller.ts'];

/** What a file loads when it runs: static imports and re-exports not erased as types, and dynamic imports. */
function loads(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly)
      out.push((node.moduleSpecifier as ts.StringLiteral).text);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly)
      out.push((node.moduleSpecifier as ts.StringLiteral).text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      out.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The chain of files from `entry` to the first one that loads `pkg`, or undefined. */
function pathTo(entry: string, pkg: string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]): string[] | undefined => {
    if (seen.has(file)) return undefined;
    seen.add(file);
    for (const spec of loads(file)) {
      if (spec === pkg || spec.startsWith(`${pkg}/`)) return [...chain, file];
      if (!spec.startsWith('.')) continue;
      const found = walk(resolve(dirname(file), spec), [...chain, file]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(join(ROOT, entry), [])?.map((f) => f.slice(ROOT.length));
}

describe('static import graph', () => {
  it.each(DAEMONS)('%s never reaches @kubernetes/client-node', (entry) => {
    expect(pathTo(entry, CLIENT)).toBeUndefined();
  });

  // What footprint took out of the agent (docs/benchmarks.md §8): its HTTP, log and metrics are its own small
  // modules (src/agent/http.ts, log.ts, exposition.ts), in the daemons' one log format and with every daemon's
  // meshgate_build_info.
  it.each(['pino', 'prom-client', 'fastify'])('src/cli/node-agent.ts never reaches %s', (pkg) => {
    expect(pathTo('src/cli/node-agent.ts', pkg)).toBeUndefined();
  });

  // The configuration's one declaration (src/config/schema.ts) is plain data in the shape language
  // (src/contract/shape.ts, issue 35), which the daemons' loader walks itself: none of them loads a schema library
  // (TypeBox, which declared it before, cost 2–4 MiB of RSS each and is no longer a dependency).
  it.each(DAEMONS)('%s never reaches @sinclair/typebox', (entry) => {
    expect(pathTo(entry, '@sinclair/typebox')).toBeUndefined();
  });

  // An ESM import of node:http reads every export, and its lazy WebSocket getters load Node's bundled undici: about
  // 3 MiB of the agent's RSS on every node (docs/benchmarks.md §8). The daemons take it with process.getBuiltinModule.
  it.each(DAEMONS)('%s never ESM-imports node:http', (entry) => {
    expect(pathTo(entry, 'node:http')).toBeUndefined();
  });

  it('the check sees an import: `meshgate check` and `uninstall` (CLI commands) load the full client', () => {
    expect(pathTo('src/cli/check.ts', CLIENT)).toEqual(['src/cli/check.ts', 'src/check/kube-reader.ts']);
    expect(pathTo('src/cli/uninstall.ts', CLIENT)?.at(-1)).toMatch(/^src\/(cli|uninstall)\//);
    expect(pathTo('src/cli/serve.ts', 'pino')).toEqual(['src/cli/serve.ts', 'src/log/logger.ts']);
    expect(pathTo('src/config/types.ts', '@sinclair/typebox')).toBeUndefined();
    expect(pathTo('src/cli/check.ts', 'node:http')).toBeUndefined();
    expect(pathTo('test/e2e/harness/net.ts', 'node:http')).toEqual(['test/e2e/harness/net.ts']);
    expect(pathTo('scripts/values-doc.ts', 'yaml')).toEqual(['scripts/values-doc.ts']);
  });
});

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
const root = ${JSON.stringify(ROOT)};
const { startServer } = await import(root + 'src/server/start.ts');
const { connectCluster } = await import(root + 'src/kube/client.ts');
const { testConfig } = await import(root + 'test/support/config.ts');
const pino = (await import('pino')).default;
const kube = await connectCluster({ kubeconfig: process.argv[1] });
const server = await startServer({
  config: testConfig('custom'),
  port: 0,
  host: '127.0.0.1',
  tlsSans: ['127.0.0.1'],
  kube,
  drainSeconds: 0,
  logger: pino({ level: 'silent' }),
});
await server.shutdown();
for (const m of ['src/cli/node-agent.ts', 'src/cli/repair-controller.ts', 'src/repair/run.ts', 'src/agent/kube-publisher.ts'])
  await import(root + m);
const undici = process.moduleLoadList.filter((m) => m.includes('undici'));
process.stdout.write(JSON.stringify({ withCredentials: kube !== undefined, loaded: [...loaded], undici }));
process.exit(0);
`;

describe('at run time', () => {
  const dir = mkdtempSync(join(tmpdir(), 'meshgate-imports-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the webhook with cluster credentials and the other daemons load no @kubernetes/client-node module, nor undici', () => {
    const path = join(dir, 'kubeconfig');
    // YAML, so the kubeconfig reader loads its YAML parser too; a loopback port nothing listens on: the caches
    // retry in the background until shutdown stops them.
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
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, path], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ withCredentials: true, loaded: [], undici: [] });
  });
});
