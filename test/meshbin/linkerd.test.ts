/**
 * Linkerd's own binaries, as scripts/build-linkerd.sh and build-linkerd-validator.sh built them from the snapshots in
 * ../shared/vendor: each runs and answers like the release does. What they do to a pod is for the tests that use
 * them; this proves the bootstrap's products are the real, working programs.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findMeshBuild } from './binaries.ts';

const run = (bin: string, args: string[], env: Record<string, string> = {}) =>
  spawnSync(bin, args, { encoding: 'utf8', input: '', env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 });

describe('linkerd (scripts/build-linkerd.sh)', () => {
  const l5d = findMeshBuild('linkerd');

  it('linkerd-cni answers the CNI VERSION command with the spec versions up to 1.1.0', () => {
    const res = run(l5d.bin('linkerd-cni'), [], { CNI_COMMAND: 'VERSION' });
    expect(res.status, res.stderr).toBe(0);
    const answer = JSON.parse(res.stdout) as { cniVersion: string; supportedVersions: string[] };
    expect(answer.supportedVersions).toEqual(expect.arrayContaining(['0.3.1', '0.4.0', '1.0.0', '1.1.0']));
    console.info(`linkerd-cni VERSION: ${res.stdout.trim()}`);
  });

  it('linkerd2-proxy-init --help exits 0 and lists the redirect flags linkerd-init passes', () => {
    const res = run(l5d.bin('linkerd2-proxy-init'), ['--help']);
    expect(res.status, res.stderr).toBe(0);
    for (const flag of ['--incoming-proxy-port', '--outgoing-proxy-port', '--proxy-uid', '--iptables-mode']) {
      expect(res.stdout).toContain(flag);
    }
  });

  it("linkerd-proxy-injector is the controller's proxy-injector: its flags, and the version the build stamped", () => {
    const help = run(l5d.bin('linkerd-proxy-injector'), ['-help']);
    expect(help.status, help.stderr).toBe(0);
    for (const flag of ['-addr', '-kubeconfig', '-linkerd-namespace', '-metrics-addr']) {
      expect(help.stderr).toContain(`  ${flag} `);
    }
    const version = run(l5d.bin('linkerd-proxy-injector'), ['-version']);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(l5d.manifest.linkerdVersion);
    expect(version.stdout.trim()).toMatch(/^git-[0-9a-f]{8}$/);
  });
});

describe('linkerd-network-validator (scripts/build-linkerd-validator.sh)', () => {
  const validator = findMeshBuild('linkerd-validator');

  it('--help exits 0 and lists the addresses it probes; --version is the crate version', () => {
    const help = run(validator.bin('linkerd-network-validator'), ['--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('--listen-addr');
    expect(help.stdout).toContain('--connect-addr');
    const version = run(validator.bin('linkerd-network-validator'), ['--version']);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(`linkerd-network-validator ${validator.manifest.validatorVersion}`);
  });
});
