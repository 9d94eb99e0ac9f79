/**
 * istio-cni's node agent, install-cni of Istio 1.27.0 (scripts/build-istio.sh): the DaemonSet's program that, with
 * --ambient-enabled, serves ztunnel's ZDS socket and programs ambient pods' redirection (docs/mesh-binaries.md).
 * Run once: its version and the ambient flags the ambient scenarios set.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findIstioBinaries } from '../e2e/harness/istio.ts';

const istio = findIstioBinaries();
const run = (args: string[]) => spawnSync(istio.bin('install-cni'), args, { encoding: 'utf8', timeout: 20_000 });

describe('install-cni (scripts/build-istio.sh)', () => {
  it('reports the release the build stamped', () => {
    const res = run(['version', '--short']);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout.trim()).toBe(`client version: ${istio.manifest.istioRelease}`);
  });

  it('--help lists the node agent flags of ambient mode', () => {
    const res = run(['--help']);
    expect(res.status, res.stderr).toBe(0);
    for (const flag of ['--ambient-enabled', '--ztunnel-uds-address', '--cni-agent-run-dir', '--mounted-cni-net-dir']) {
      expect(res.stdout).toContain(flag);
    }
    expect(res.stdout).toContain('(default "/var/run/ztunnel/ztunnel.sock")');
  });
});
