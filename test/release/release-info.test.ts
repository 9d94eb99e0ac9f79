// What a release is named by, read from the chart (src/util/release-info.ts), and the pieces of the release step
// that need no registry: the version check, reproducible layers, and `meshgate version` in a checkout and a release.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { releaseFacts } from '../../scripts/release.ts';
import { tarLayer, writeImage } from '../../scripts/release-oci.ts';
import { withChart } from '../../src/cli/version.ts';
import { chartRelease } from '../../src/util/release-info.ts';
import { versionInfo } from '../../src/util/version.ts';
import { repoRoot } from '../support/build-cache.ts';

const tmp = mkdtempSync(join(tmpdir(), 'meshgate-release-info-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('chartRelease: the image reference the chart renders by default', () => {
  const chart = { name: 'meshgate', version: '0.2.0', appVersion: '0.1.0' };
  it.each([
    [{ repository: 'ghcr.io/meshgate/meshgate', tag: '' }, 'ghcr.io/meshgate/meshgate:0.1.0'],
    [{ repository: 'ghcr.io/meshgate/meshgate', tag: '0.1.0-rc1' }, 'ghcr.io/meshgate/meshgate:0.1.0-rc1'],
    [{ repository: 'm/mg', tag: 'x', digest: 'sha256:abc' }, 'm/mg@sha256:abc'],
    [
      { registry: 'mirror.example:5000', repository: 'meshgate/meshgate' },
      'mirror.example:5000/meshgate/meshgate:0.1.0',
    ],
  ])('%j → %s', (image, ref) => {
    expect(chartRelease(chart, { image })).toMatchObject({ chart: 'meshgate', chartVersion: '0.2.0', image: ref });
  });

  it('names what is missing', () => {
    expect(() => chartRelease({ ...chart, appVersion: 1 }, { image: { repository: 'r' } }, 'x')).toThrow(
      'x: Chart.yaml appVersion is missing or not a string',
    );
    expect(() => chartRelease(chart, {}, 'x')).toThrow('x: values.yaml image.repository is missing or not a string');
  });

  it('this chart: its default image is the release’s, tagged with its appVersion, which is package.json’s version', () => {
    const f = releaseFacts();
    expect(f.image).toBe(`ghcr.io/meshgate/meshgate:${f.version}`);
    expect(f.buildInfo).toMatchObject({ chart: `meshgate ${f.chartVersion}`, image: f.image });
  });
});

describe('releaseFacts refuses a chart whose appVersion is not the package’s version', () => {
  it('names both versions', () => {
    const root = join(tmp, 'checkout');
    mkdirSync(join(root, 'charts'), { recursive: true });
    cpSync(join(repoRoot, 'charts/meshgate'), join(root, 'charts/meshgate'), { recursive: true });
    writeFileSync(join(root, 'package.json'), JSON.stringify({ version: '9.9.9' }));
    expect(() => releaseFacts(root)).toThrow(/appVersion is 0\.1\.0 but package\.json's version is 9\.9\.9/);
  });
});

describe('OCI layers', () => {
  it('the same files give the same digests (mtimes aside), and different files different ones', async () => {
    const layer = async (name: string, text: string) => {
      const dir = join(tmp, name);
      mkdirSync(join(dir, 'app'), { recursive: true });
      writeFileSync(join(dir, 'app/x.txt'), text);
      const layout = join(tmp, `${name}.layout`);
      const l = await tarLayer(dir, layout);
      return { layer: l, image: writeImage(layout, 'r.example/x:1', [l], { user: '65532:65532' }), layout };
    };
    const a = await layer('a', 'one');
    await new Promise((r) => setTimeout(r, 20));
    const b = await layer('b', 'one');
    const c = await layer('c', 'two');
    expect(b.layer).toEqual(a.layer);
    expect(b.image.digest).toBe(a.image.digest);
    expect(c.layer.digest).not.toBe(a.layer.digest);
    expect(a.layer.mediaType).toBe('application/vnd.oci.image.layer.v1.tar+gzip');
    expect(a.layer.diffId).not.toBe(a.layer.digest);
    const index = JSON.parse(readFileSync(join(a.layout, 'index.json'), 'utf8'));
    expect(index.manifests[0].annotations).toEqual({
      'io.containerd.image.name': 'r.example/x:1',
      'org.opencontainers.image.ref.name': '1',
    });
  });
});

describe('meshgate version: the chart and image it belongs to', () => {
  it('a release names them from build-info.json (printable words only)', () => {
    const root = join(tmp, 'built');
    mkdirSync(root);
    writeFileSync(join(root, 'package.json'), '{"version":"1.2.3"}');
    writeFileSync(
      join(root, 'build-info.json'),
      JSON.stringify({ chart: 'meshgate 0.2.0', image: 'ghcr.io/meshgate/meshgate:1.2.3' }),
    );
    expect(versionInfo(root)).toMatchObject({ chart: 'meshgate 0.2.0', image: 'ghcr.io/meshgate/meshgate:1.2.3' });
    writeFileSync(join(root, 'build-info.json'), JSON.stringify({ chart: 'x\u001b[2J', image: 7 }));
    expect(versionInfo(root)).not.toHaveProperty('chart');
    expect(versionInfo(root)).not.toHaveProperty('image');
  });

  it('a checkout names its own chart and that chart’s default image', async () => {
    const v = await withChart(versionInfo(repoRoot), repoRoot);
    const f = releaseFacts();
    expect(v).toMatchObject({ chart: `meshgate ${f.chartVersion}`, image: f.image, releaseSource: 'checkout' });
    // Neither a build-info.json nor a chart: unknown, not invented.
    const bare = join(tmp, 'bare');
    mkdirSync(bare);
    writeFileSync(join(bare, 'package.json'), '{"version":"1.2.3"}');
    expect(await withChart(versionInfo(bare), bare)).not.toHaveProperty('chart');
  });
});
