// A config file that is JSON (as the chart writes it) is read without loading the YAML parser, which is ~1.4 MiB of
// the node agent's RSS on every node; a YAML file still loads it, and both give the same config.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'meshgate-json-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CHILD = `
import { registerHooks } from 'node:module';
let yaml = false;
registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    if (r.url.includes('/node_modules/yaml/')) yaml = true;
    return r;
  },
  load(url, context, next) {
    if (url.includes('/node_modules/yaml/')) yaml = true;
    return next(url, context);
  },
});
const { loadConfig } = await import(${JSON.stringify(`${ROOT}src/config/load.ts`)});
const config = loadConfig(process.argv[1]);
process.stdout.write(JSON.stringify({ yaml, mesh: config.mesh, uid: config.proxy.uid, ns: config.meshNamespace }));
`;

function load(name: string, text: string) {
  const file = join(dir, name);
  writeFileSync(file, text);
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, file], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { yaml: boolean; mesh: string; uid: number; ns: string };
}

describe('config files', () => {
  it('JSON: read without the YAML parser; YAML: with it; the same config from both', () => {
    const json = load('config.json', JSON.stringify({ mesh: 'istio', meshNamespace: 'mesh-system' }, null, 2));
    const yaml = load('config.yaml', 'mesh: istio\nmeshNamespace: mesh-system\n');
    expect(json.yaml).toBe(false);
    expect(yaml.yaml).toBe(true);
    expect({ ...json, yaml: true }).toEqual(yaml);
  });
});
