// The release installed the way users install it (issue 34 §1): `npm run release`'s step (scripts/release.ts) builds
// the image, the chart package and the single-file CLI into a temp dir; the image and the chart are pushed to a real
// OCI registry (go-containerregistry's `crane registry serve`, on loopback inside this run's network namespace) with
// `crane push` and `helm push`; `helm install oci://…` installs the chart from the registry on the real apiserver of
// test/e2e/harness (kwok nodes), and what got installed names the registry's image by tag and, set so, by digest.
// The image pulled back from the registry runs (chroot into its filesystem, as its user) and names its chart; the
// single-file CLI runs without Node, a clone or node_modules. Real-node pulls from the registry: the real-node tier
// (test/realnode/harness/registry.ts).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../scripts/release-cli.ts';
import { release, type ReleaseResult } from '../../scripts/release.ts';
import { startControlPlane, type ControlPlane } from '../e2e/harness/index.ts';
import { crane, type Registry, startRegistry } from './crane.ts';

const NS = 'meshgate';
const CHART_REPO = 'charts';

describe('the release, pushed to an OCI registry and installed from it', () => {
  const work = mkdtempSync(join(tmpdir(), 'meshgate-release-'));
  let r: ReleaseResult;
  let registry: Registry;
  let cp: ControlPlane;
  let repo: string;

  beforeAll(async () => {
    r = await release(join(work, 'out'));
    registry = await startRegistry(work);
    repo = `${registry.address}/meshgate/meshgate`;
    cp = await startControlPlane({ nodes: [{ name: 'node-a' }] });
    await cp.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    process.stdout.write(
      `release step: ${JSON.stringify(r.seconds)} s; image ${(r.image.bytes / 1e6).toFixed(1)} MB compressed in ` +
        `${r.image.layers.length} layers; CLI ${(statSync(r.cli).size / 1e6).toFixed(1)} MB\n`,
    );
  }, 600_000);

  afterAll(async () => {
    await cp?.stop();
    await registry?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('names the chart’s default image, the appVersion as tag, in the image, the chart and the CLI alike', () => {
    expect(r.facts.image).toBe(`ghcr.io/meshgate/meshgate:${r.facts.appVersion}`);
    expect(r.facts.appVersion).toBe(r.facts.version);
    const index = JSON.parse(readFileSync(join(r.image.layout, 'index.json'), 'utf8'));
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0]).toMatchObject({
      digest: r.image.digest,
      annotations: { 'org.opencontainers.image.ref.name': r.facts.appVersion },
    });
    const manifest = JSON.parse(readFileSync(join(work, 'out', 'release.json'), 'utf8'));
    expect(manifest).toMatchObject({
      version: r.facts.version,
      chart: { version: r.facts.chartVersion, appVersion: r.facts.appVersion },
      image: { ref: r.facts.image, digest: r.image.digest },
    });
    const sums = readFileSync(join(work, 'out', 'SHA256SUMS'), 'utf8');
    expect(sums).toMatch(new RegExp(`^[0-9a-f]{64}  meshgate-${r.facts.chartVersion}\\.tgz$`, 'm'));
  });

  it('crane pushes the image layout; the registry holds it under the same digest, and it validates', async () => {
    await crane(['push', r.image.layout, `${repo}:${r.facts.appVersion}`, '--insecure']);
    expect((await crane(['digest', `${repo}:${r.facts.appVersion}`, '--insecure'])).trim()).toBe(r.image.digest);
    // Every layer fetched and checked against its digest and the config's diff_ids.
    await crane(['validate', '--remote', `${repo}:${r.facts.appVersion}`, '--insecure']);
    const config = JSON.parse(await crane(['config', `${repo}:${r.facts.appVersion}`, '--insecure']));
    expect(config.config).toMatchObject({
      User: '65532:65532',
      Entrypoint: ['/nodejs/bin/node', '--no-maglev', '/app/bin/meshgate.js'],
      WorkingDir: '/app',
    });
    expect(config.config.Labels['org.opencontainers.image.base.name']).toMatch(/^stand-in for gcr\.io\/distroless/);
  });

  it('the image pulled back from the registry runs as its user and names its chart and image', async () => {
    const root = join(work, 'rootfs');
    mkdirSync(root);
    const fs = join(work, 'fs.tar');
    await crane(['export', `${repo}:${r.facts.appVersion}`, fs, '--insecure']);
    execFileSync('tar', ['-C', root, '-xf', fs]);
    expect(statSync(join(root, 'app/build-info.json')).mode & 0o777).toBe(0o644);
    // As root: chroot into the image's own filesystem (its node, its libraries, its /etc/passwd) as uid 65532.
    // Otherwise the image's node runs on this machine's libraries.
    const args = ['--no-maglev', '/app/bin/meshgate.js', 'version', '-o', 'json'];
    const res =
      process.getuid?.() === 0
        ? spawnSync('chroot', ['--userspec=65532:65532', root, '/nodejs/bin/node', ...args], {
            encoding: 'utf8',
            env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', NODE_OPTIONS: '--max-semi-space-size=2' },
            cwd: '/',
          })
        : spawnSync(
            join(root, 'nodejs/bin/node'),
            args.map((a) => (a.startsWith('/') ? join(root, a) : a)),
            {
              encoding: 'utf8',
            },
          );
    expect(res.status, `${res.error ?? ''} ${res.stderr}`).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      version: r.facts.version,
      chart: `meshgate ${r.facts.chartVersion}`,
      image: r.facts.image,
      commitSource: 'build-info.json',
    });
  }, 180_000);

  it('helm pushes the chart and installs it from oci://, running the registry’s image by tag', async () => {
    const push = await cp.helm(['push', r.chartPackage, `oci://${registry.address}/${CHART_REPO}`, '--plain-http']);
    expect(push.code, push.stderr).toBe(0);
    expect(`${push.stdout}${push.stderr}`).toContain(
      `${registry.address}/${CHART_REPO}/meshgate:${r.facts.chartVersion}`,
    );
    const install = await fromRegistry('install', ['--set', 'mesh=istio', '--set', `image.repository=${repo}`]);
    expect(install.code, install.stderr).toBe(0);
    expect(await installedImages()).toEqual(new Set([`${repo}:${r.facts.appVersion}`]));
    expect(registry.requests()).toContain(`GET /v2/${CHART_REPO}/meshgate/manifests/${r.facts.chartVersion}`);
  });

  it('and, pinned by digest, by the digest the registry serves', async () => {
    const upgrade = await fromRegistry('upgrade', ['--reuse-values', '--set', `image.digest=${r.image.digest}`]);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    const images = await installedImages();
    expect(images).toEqual(new Set([`${repo}@${r.image.digest}`]));
    expect((await crane(['digest', [...images][0], '--insecure'])).trim()).toBe(r.image.digest);
  });

  it('the single-file CLI runs alone (no Node, clone or node_modules) and names its chart and image', () => {
    const alone = mkdtempSync(join(tmpdir(), 'meshgate-cli-'));
    try {
      const cli = join(alone, 'meshgate');
      copyFileSync(r.cli, cli);
      execFileSync('chmod', ['755', cli]);
      const run = (args: string[]) =>
        spawnSync(cli, args, { encoding: 'utf8', cwd: alone, env: { PATH: '/nonexistent', HOME: alone } });
      const version = run(['version']);
      expect(version.status, version.stderr).toBe(0);
      expect(version.stdout).toContain(`chart:    meshgate ${r.facts.chartVersion}\n`);
      expect(version.stdout).toContain(`image:    ${r.facts.image}\n`);
      expect(version.stdout).toMatch(new RegExp(`^meshgate ${r.facts.version.replace(/\./g, '\\.')}\\n`));
      // The image's Node.js flags ride in the executable (SEA execArgv), with no NODE_OPTIONS to carry them.
      expect(version.stdout).toContain(`  node:     ${process.version} ${NODE_FLAGS.join(' ')}\n`);
      const help = run(['check', '--help']);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^usage: meshgate check/);
      // A command that reads YAML (bundled, loaded lazily) and decides: the pure core runs in the executable.
      const explain = spawnSync(cli, ['explain', '--mesh', 'istio', '-f', '-'], {
        encoding: 'utf8',
        cwd: alone,
        input:
          'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: a, image: b}]}\n',
      });
      expect(explain.stdout, explain.stderr).toContain('Pod p (namespace default)');
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
  });

  /** `helm install|upgrade meshgate oci://<registry>/charts/meshgate --version <the release's>`. */
  const fromRegistry = (verb: 'install' | 'upgrade', args: string[]) =>
    cp.helm([
      verb,
      'meshgate',
      `oci://${registry.address}/${CHART_REPO}/meshgate`,
      '--version',
      r.facts.chartVersion,
      '--plain-http',
      '--namespace',
      NS,
      ...args,
    ]);

  /** The images of every container and init container the release's workloads run. */
  async function installedImages(): Promise<Set<string>> {
    const apps = cp.kc.makeApiClient(AppsV1Api);
    const templates = [
      ...(await apps.listNamespacedDeployment({ namespace: NS })).items.map((d) => d.spec?.template),
      ...(await apps.listNamespacedDaemonSet({ namespace: NS })).items.map((d) => d.spec?.template),
    ];
    expect(templates.length).toBeGreaterThanOrEqual(2);
    return new Set(
      templates.flatMap((t) =>
        [...(t?.spec?.containers ?? []), ...(t?.spec?.initContainers ?? [])].map((c) => c.image!),
      ),
    );
  }
});
