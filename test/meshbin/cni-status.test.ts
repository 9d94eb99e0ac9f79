/**
 * containerd ≥ 2.0.1 calls CNI STATUS on the default network (libcni's GetStatusNetworkList, only for a conflist of
 * cniVersion ≥ 1.1.0) and reports the CRI's NetworkReady from it. What the mesh plugins answer decides what that
 * readiness can say about redirection: neither implements STATUS (their skel.CNIFuncs have no Status), so both
 * answer success without checking anything — not even their kubeconfig — and a plugin dropped from the list is
 * never asked at all. NetworkReady is therefore no substitute for meshgate's verdict (docs/real-nodes.md).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findIstioBinaries } from '../e2e/harness/istio.ts';
import { findMeshBuild } from './binaries.ts';

const status = (bin: string, conf: object) =>
  spawnSync(bin, [], {
    input: JSON.stringify(conf),
    encoding: 'utf8',
    env: { CNI_COMMAND: 'STATUS', CNI_PATH: '/nonexistent', PATH: process.env.PATH ?? '' },
    timeout: 20_000,
  });

describe('CNI STATUS, as containerd 2.x asks it of the mesh plugins', () => {
  const plugins = {
    'linkerd-cni': findMeshBuild('linkerd').bin('linkerd-cni'),
    'istio-cni': findIstioBinaries().bin('istio-cni'),
  };
  for (const [type, bin] of Object.entries(plugins)) {
    it(`${type}: success for a 1.1.0 config, whatever its kubeconfig; refused below 1.1.0`, () => {
      const conf = { cniVersion: '1.1.0', name: 'k8s-pod-network', type, kubernetes: { kubeconfig: '/nonexistent' } };
      const ok = status(bin, conf);
      expect(ok.status, ok.stdout + ok.stderr).toBe(0);
      const old = status(bin, { ...conf, cniVersion: '0.3.1' });
      expect(old.status).not.toBe(0);
      expect(old.stdout).toContain('config version does not allow STATUS');
    });
  }
});
