/**
 * The status annotation: what recordStatus writes (JSON.stringify) reads back (readStatus) to the same status, on
 * every status the corpus pods get under every profile and on names that need escaping.
 */
import { describe, expect, it } from 'vitest';
import { type InjectionStatus, readStatus } from '../../src/policy/status.ts';
import { decide } from '../../src/policy/mutate/decide.ts';
import { parsePod } from '../../src/pod/parse.ts';
import { nodeFactsFromState } from '../../src/facts/node-state.ts';
import { testConfig } from '../support/config.ts';
import { corpusTemplatePods } from '../support/corpus.ts';
import { istio, istioPod, linkerd, linkerdPod } from './mutate/fixtures.ts';

describe('the status annotation', () => {
  it('writes what JSON.stringify writes, for every corpus pod under every profile and node state', () => {
    const states = [
      nodeFactsFromState({ nodes: { 'node-a': { verified: true, kubeletVersion: 'v1.34.1' } } }, 'test'),
      nodeFactsFromState({ nodes: { 'node-a': { verified: false, kubeletVersion: 'v1.28.1' } } }, 'test'),
    ];
    const seen = new Set<string>();
    // The corpus's injected pods come from old injectors; the fixtures are what Istio's and Linkerd's current ones
    // write, with a regular and a native-sidecar proxy.
    const native = { restartPolicy: 'Always' };
    const fixtures = [
      istioPod(),
      istioPod({ initContainers: [istio.proxy(native), istio.init()], containers: [{ name: 'app', image: 'nginx' }] }),
      linkerdPod(),
      linkerdPod({
        initContainers: [linkerd.init(), linkerd.proxy(native)],
        containers: [{ name: 'app', image: 'nginx' }],
      }),
    ];
    for (const template of [...corpusTemplatePods(), ...fixtures]) {
      const parsed = parsePod(template);
      if (!parsed.ok) continue;
      for (const mesh of ['custom', 'istio', 'linkerd'] as const)
        for (const facts of states) {
          const d = decide({ pod: parsed.pod, namespace: 'apps' }, facts, testConfig(mesh));
          if (d.kind !== 'patch') continue;
          const json = JSON.stringify(d.status);
          expect(readStatus({ 'meshgate.io/status': json })).toEqual(d.status);
          seen.add(json);
        }
    }
    // Statuses of both modes, with and without removed init containers, affinity and a native sidecar.
    expect(seen.size).toBeGreaterThan(5);
  });

  it('quotes names and the node, whatever they hold', () => {
    const odd = ['', 'a"b', 'back\\slash', 'line\nbreak', 'é✓𝄞', '\u2028', '\u0000'];
    const status: InjectionStatus = {
      version: 1,
      mode: 'init',
      reason: 'node_unverified_validate',
      nativeSidecar: true,
      initContainers: odd,
      containers: ['proxy'],
      volumes: [],
      affinity: false,
      node: 'n"ode\\',
      removedInitContainers: odd,
    };
    expect(readStatus({ 'meshgate.io/status': JSON.stringify(status) })).toEqual(status);
    const { node: _n, removedInitContainers: _r, ...bare } = status;
    expect(readStatus({ 'meshgate.io/status': JSON.stringify(bare) })).toEqual(bare);
  });
});
