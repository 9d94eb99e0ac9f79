/**
 * Compiled configurations for tests, one per mesh profile. `custom` gets image names for its templates (a real
 * deployment must set them; meshgate refuses to start without); the companion profiles also recognise the image
 * repositories the meshes' own test fixtures use (registry.istio.io/testing/proxyv2 in Istio's test data).
 */
import { readFileSync } from 'node:fs';
import { buildConfig } from '../../src/config/load.ts';
import { compileConfig, type Compiled } from '../../src/config/compile.ts';
import type { MeshName } from '../../src/mesh/types.ts';

/** Images in the test configs: public, existing images (the tests never pull them). */
export const TEST_IMAGES = {
  proxy: 'docker.io/istio/proxyv2:1.27.0',
  init: 'docker.io/istio/proxyv2:1.27.0',
} as const;

const ISTIO_TEST_IMAGES = [
  'docker.io/istio/proxyv2',
  'gcr.io/istio-release/proxyv2',
  'registry.istio.io/testing/proxyv2',
];

/**
 * The raw config a test starts from, before its own overrides (objects merge key by key in buildConfig). Tests run
 * under the default `apps.privileges: node`, which admits plain app containers (`nginx`, no securityContext), so they
 * are judged only by the rule under test; `restricted`'s own tests (test/policy/escalation.test.ts, the e2e tiers)
 * set it explicitly.
 */
export function baseConfig(mesh: MeshName): Record<string, unknown> {
  if (mesh === 'custom')
    return {
      mesh,
      cni: { pluginType: 'istio-cni' },
      proxy: { image: TEST_IMAGES.proxy, args: ['proxy', 'sidecar'] },
      init: { image: TEST_IMAGES.init },
    };
  if (mesh === 'istio')
    return {
      mesh,
      recognisedImages: { proxy: ISTIO_TEST_IMAGES, init: ISTIO_TEST_IMAGES, validator: ISTIO_TEST_IMAGES },
    };
  return { mesh, controlPlane: { trustAnchors: [linkerdTestAnchors()] } };
}

/**
 * The trust anchors of Linkerd's own test fixtures (the injector's golden emojivoto pod in shared/corpus, which the
 * contract and golden tests judge): what a linkerd-identity-trust-roots would hold in their cluster, read from the
 * corpus rather than copied here. Read on first use, not at import: the bench server runs this file compiled from
 * .cache/bench-dist (bench/compiled.ts), where this relative path does not reach shared/corpus, and it never builds
 * the linkerd profile.
 */
let anchors: string | undefined;
function linkerdTestAnchors(): string {
  if (anchors !== undefined) return anchors;
  const file = new URL('../../../shared/corpus/manifests/linkerd__inject_emojivoto_pod.golden.yaml', import.meta.url);
  const m = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`no certificate in ${file.pathname}`);
  anchors = m[0].replace(/\n\s+/g, '\n');
  return anchors;
}

function mergeDeep(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && prev && typeof prev === 'object' && !Array.isArray(prev)
        ? mergeDeep(prev as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

export function rawConfig(mesh: MeshName, over: Record<string, unknown> = {}): Record<string, unknown> {
  return mergeDeep(baseConfig(mesh), over);
}

export function testConfig(mesh: MeshName = 'custom', over: Record<string, unknown> = {}): Compiled {
  return compileConfig(buildConfig(rawConfig(mesh, over), `test (${mesh})`));
}
