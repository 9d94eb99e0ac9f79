// How the real-node tier points each containerd at the run's registry (test/realnode/harness/registry.ts): the
// chart's registry host is served by the loopback registry over plain HTTP, through the registry config_path that
// both containerd configs (1.6's version 2, 2.4's version 4) name. The pull itself runs on real nodes
// (`npm run scenarios`, which checks the kubelets' Pulled events and the registry's manifest requests).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { containerdConfig, containerdPaths } from '../realnode/harness/containerd.ts';
import { containerd2Config } from '../realnode/harness/containerd2.ts';
import { MESHGATE_REF } from '../realnode/harness/images.ts';
import { registryHost, repositoryOf, writeHostsConfig } from '../realnode/harness/registry.ts';
import { repoRoot } from '../support/build-cache.ts';

const tmp = mkdtempSync(join(tmpdir(), 'meshgate-registry-config-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the tier pulls meshgate’s image under the chart’s default reference', () => {
  it('MESHGATE_REF is the chart’s image.repository with its appVersion', () => {
    const chart = parse(readFileSync(join(repoRoot, 'charts/meshgate/Chart.yaml'), 'utf8'));
    const values = parse(readFileSync(join(repoRoot, 'charts/meshgate/values.yaml'), 'utf8'));
    expect(MESHGATE_REF).toBe(`${values.image.repository}:${chart.appVersion}`);
  });

  it.each([
    ['ghcr.io/meshgate/meshgate:0.1.0', 'ghcr.io', 'meshgate/meshgate:0.1.0'],
    ['127.0.0.1:5000/meshgate/meshgate:0.1.0', '127.0.0.1:5000', 'meshgate/meshgate:0.1.0'],
    ['localhost/x:1', 'localhost', 'x:1'],
    ['meshgate/meshgate:0.1.0', 'docker.io', 'meshgate/meshgate:0.1.0'],
    ['busybox:1', 'docker.io', 'busybox:1'],
  ])('%s: host %s, repository %s', (ref, host, repo) => {
    expect(registryHost(ref)).toBe(host);
    expect(repositoryOf(ref)).toBe(repo);
  });
});

describe('containerd reads the registry from a hosts.toml, plain HTTP on loopback only', () => {
  const hosts = writeHostsConfig(join(tmp, 'certs.d'), 'ghcr.io', '127.0.0.1:41234');
  it('hosts.toml names the loopback registry as the server and the one host (containerd 1.6 needs the table)', () => {
    const text = readFileSync(join(hosts, 'ghcr.io', 'hosts.toml'), 'utf8');
    const settings = text.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(settings).toEqual([
      'server = "http://127.0.0.1:41234"',
      '[host."http://127.0.0.1:41234"]',
      '  capabilities = ["pull", "resolve"]',
    ]);
  });

  it.each([
    ['1.6 (version 2)', containerdConfig, '[plugins."io.containerd.grpc.v1.cri".registry]'],
    ['2.4 (version 4)', containerd2Config, "[plugins.'io.containerd.cri.v1.images'.registry]"],
  ])('containerd %s names it as config_path, and only when given', (_, config, table) => {
    const p = containerdPaths(join(tmp, 'node'));
    const withRegistry = config(p, 'localhost/pause:1', hosts);
    expect(withRegistry).toContain(`${table}\n  config_path = ${JSON.stringify(hosts)}\n`);
    expect(config(p, 'localhost/pause:1')).not.toContain('config_path');
  });
});
