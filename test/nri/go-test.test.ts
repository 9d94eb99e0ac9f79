// The NRI plugin's own Go tests (nri/*_test.go: which containers it refuses or adjusts, the seccomp merge), run with
// the module cache scripts/build-nri.sh filled: offline (GOPROXY=off), local toolchain, no checksum database.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { findMeshBuild } from '../meshbin/binaries.ts';

it('go test ./... in nri/ passes', () => {
  findMeshBuild('nri'); // the build downloaded the modules the tests need
  const r = spawnSync('go', ['test', '-count=1', './...'], {
    cwd: join(import.meta.dirname, '../../nri'),
    encoding: 'utf8',
    timeout: 300_000,
    env: {
      ...process.env,
      GOTOOLCHAIN: 'local',
      GOFLAGS: '-mod=mod -buildvcs=false',
      GOSUMDB: 'off',
      GOPROXY: 'off',
      CGO_ENABLED: '0',
    },
  });
  expect(`${r.stdout}${r.stderr}`).toMatch(/^ok\s+github.com\/meshgate\/meshgate\/nri/m);
  expect(r.status).toBe(0);
}, 300_000);
