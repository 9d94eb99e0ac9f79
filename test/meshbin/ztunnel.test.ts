/**
 * ztunnel, Istio ambient's node proxy (scripts/build-ztunnel.sh, `--features testing`), run the standalone way
 * docs/mesh-binaries.md describes: no istiod (XDS_ADDRESS empty), a fake CA, its whole state from a local XDS file,
 * one dedicated workload. It runs in its own network namespace (`unshare --net`, only lo up): its wildcard listeners
 * exist there only, and the readiness and admin probes are made inside it with nsenter.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findMeshBuild } from './binaries.ts';

const zt = findMeshBuild('ztunnel');

/** One workload on 127.0.0.1 with a service, as in ztunnel's examples/localhost.yaml. */
const LOCAL_XDS = `workloads:
- uid: cluster1//v1/Pod/default/local
  name: local
  namespace: default
  serviceAccount: default
  workloadIps: ["127.0.0.1"]
  protocol: HBONE
  node: local
  services:
    "default/example.com":
      80: 8080
services:
- name: local
  namespace: default
  hostname: example.com
  vips: ["/127.10.0.1"]
  ports:
    80: 8080
`;

describe('ztunnel (scripts/build-ztunnel.sh)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'meshgate-ztunnel-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('`ztunnel version` names the snapshot commit it was built from', () => {
    const res = spawnSync(zt.bin('ztunnel'), ['version'], { encoding: 'utf8', timeout: 20_000 });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain(`GitRevision:"${zt.manifest.ztunnelCommit}"`);
    expect(res.stdout).toMatch(/BuildProfile:"release"/);
  });

  it('runs standalone (fake CA, local XDS file, dedicated mode): ready, and its config dump holds the file', async () => {
    const xds = join(tmp, 'local.yaml');
    writeFileSync(xds, LOCAL_XDS);
    const proxy = spawn('unshare', ['--net', 'sh', '-c', 'ip link set lo up && exec "$0" proxy', zt.bin('ztunnel')], {
      env: {
        PATH: process.env.PATH ?? '',
        FAKE_CA: 'true',
        XDS_ADDRESS: '',
        LOCAL_XDS_PATH: xds,
        PROXY_MODE: 'dedicated',
        PROXY_WORKLOAD_INFO: 'default/local/default',
        RUST_LOG: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const collect = (d: Buffer) => {
      log += d.toString();
    };
    proxy.stdout.on('data', collect);
    proxy.stderr.on('data', collect);
    const exited = new Promise<void>((resolve) => proxy.on('exit', () => resolve()));
    // Inside ztunnel's namespace: unshare exec()s sh, which exec()s ztunnel, so its pid is the child's.
    const inside = (url: string) =>
      spawnSync('nsenter', [`--net=/proc/${proxy.pid}/ns/net`, 'curl', '-s', '-m', '2', '-w', '\n%{http_code}', url], {
        encoding: 'utf8',
      });
    try {
      let ready = '';
      for (let i = 0; i < 100 && proxy.exitCode === null; i++) {
        ready = inside('http://127.0.0.1:15021/healthz/ready').stdout;
        if (ready.endsWith('\n200')) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(ready.split('\n').at(-1), `readiness never 200; ztunnel said:\n${log}`).toBe('200');
      const dump = inside('http://127.0.0.1:15000/config_dump').stdout;
      expect(dump).toContain('cluster1//v1/Pod/default/local');
      expect(dump).toContain('example.com');
    } finally {
      proxy.kill('SIGTERM');
      await exited;
    }
  });
});
