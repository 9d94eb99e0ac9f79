import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { parseAllDocuments, stringify } from 'yaml';
import { rawConfig } from '../support/config.ts';

/** The config every call gets unless it names its own: mesh custom, meshgate injecting its own templates. */
const CONFIG = join(mkdtempSync(join(tmpdir(), 'meshgate-inject-cli-')), 'config.yaml');
writeFileSync(CONFIG, stringify(rawConfig('custom')));

async function cli(args: string[], stdin = '') {
  const io = memoryIO(stdin);
  const offline = args[0] === 'inject' || args[0] === 'explain';
  const code = await main(
    offline && !args.includes('--config') && !args.includes('--mesh') ? [...args, '--config', CONFIG] : args,
    io,
  );
  return { code, out: io.out, err: io.err };
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`;
const service = `apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
`;
const cronjob = `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: job, image: busybox}]
`;

describe('meshgate inject', () => {
  it('injects every pod template of a multi-document file and passes other documents through', async () => {
    const r = await cli(['inject', '-f', '-'], `${deployment}---\n${service}---\n${cronjob}`);
    expect(r.code).toBe(0);
    const docs = parseAllDocuments(r.out).map((d) => d.toJS());
    expect(docs.map((d) => d.kind)).toEqual(['Deployment', 'Service', 'CronJob']);
    expect(docs[0].spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual([
      'web',
      'meshgate-proxy',
    ]);
    expect(docs[1]).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(docs[2].spec.jobTemplate.spec.template.spec.initContainers[0].name).toBe('meshgate-init');
  });

  it('injects the items of a kind: List', async () => {
    const list = `apiVersion: v1\nkind: List\nitems:\n- ${deployment.replace(/\n/g, '\n  ')}`;
    const r = await cli(['inject', '-f', '-'], list);
    expect(r.code).toBe(0);
    expect(r.out).toContain('meshgate-proxy');
  });

  it.each([
    ['invalid YAML', `${service}---\nkind: [\n`, /<stdin>: document 2: invalid YAML/],
    [
      'a document that is not an object',
      `${service}---\n- a\n- b\n`,
      /document 2: not a Kubernetes object: expected a mapping, got a sequence/,
    ],
    ['a document without kind', `apiVersion: v1\nmetadata: {}\n`, /document 1: not a Kubernetes object: missing kind/],
    [
      'an invalid annotation',
      deployment.replace(
        'labels: {app: web}',
        'labels: {app: web}, annotations: {meshgate.io/exclude-inbound-ports: "99999"}',
      ),
      /document 1 \(Deployment web\): denied: annotation meshgate\.io\/exclude-inbound-ports: port 99999 is out of range/,
    ],
  ])('fails on %s with exit 1, the document index, and no partial output', async (_n, input, message) => {
    const r = await cli(['inject', '-f', '-'], input);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(message);
  });

  it('usage errors exit 2', async () => {
    expect((await cli(['inject'])).code).toBe(2);
    expect((await cli(['inject', '-f', 'x', '--bogus'])).code).toBe(2);
    expect((await cli(['nonsense'])).code).toBe(2);
  });

  it('a missing file or bad config exits 1 naming it', async () => {
    expect(await cli(['inject', '-f', '/nonexistent.yaml'])).toMatchObject({
      code: 1,
      err: expect.stringMatching(/nonexistent\.yaml/),
    });
    expect(await cli(['inject', '-f', '-', '--config', '/nonexistent-config.yaml'], deployment)).toMatchObject({
      code: 1,
      err: expect.stringMatching(/nonexistent-config\.yaml.*cannot read/s),
    });
  });
});

describe('meshgate explain', () => {
  it('says, per pod, inject or skip, the mode and what would be rejected', async () => {
    const state = new URL('../golden/testdata/node-state-verified.yaml', import.meta.url).pathname;
    const ok = await cli(['explain', '-f', '-', '--node-state', state], `${deployment}---\n${service}`);
    expect(ok.out).toMatch(/Deployment web \(namespace shop\):\n {2}injected; redirect mode CNI \(affinity_verified\)/);
    expect(ok.out).toMatch(/Service has no pod template/);
    const bad = await cli(['explain', '-f', '-', '--node-state', state, '--node', 'node-b'], deployment);
    expect(bad.out).toMatch(
      /REJECTED \(node_unverified\)[\s\S]*node node-b has no verified CNI chain \(mesh_plugin_missing/,
    );
  });

  it('under a refusal, lists every change that makes the pod admissible (issue 31 §4)', async () => {
    const state = new URL('../golden/testdata/node-state-verified.yaml', import.meta.url).pathname;
    const risky = deployment.replace(
      'containers: [{name: web, image: nginx}]',
      'securityContext: {runAsUser: 1337}\n      containers: [{name: web, image: nginx, securityContext: {privileged: true, capabilities: {add: [SETUID]}}}]',
    );
    const r = await cli(['explain', '-f', '-', '--node-state', state], risky);
    expect(r.out).toContain(
      [
        '    to be admitted, change:',
        "      - the pod: spec.securityContext.runAsUser: set a UID other than 1337, the proxy's, which the redirect exempts [proxy_identity]",
        '      - container web: securityContext.privileged: set false [redirect_tamper]',
        '      - container web: securityContext.capabilities.add: remove SETUID [proxy_escalation]',
      ].join('\n'),
    );
  });
});
