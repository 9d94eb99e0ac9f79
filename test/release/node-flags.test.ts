// The release's Node.js flags (scripts/release-cli.ts NODE_FLAGS) in each way meshgate starts: the image's
// NODE_OPTIONS (test/docker/dockerfile.test.ts), the single executable's execArgv (test/release/release.test.ts),
// and bin/meshgate.js run as a command, as `npx meshgate` runs it: through its first line, checked here by running it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../scripts/release-cli.ts';
import { repoRoot } from '../e2e/harness/binaries.ts';

describe('bin/meshgate.js run as a command', () => {
  const shim = join(repoRoot, 'bin/meshgate.js');

  it("names the release's flags on its first line", () => {
    expect(readFileSync(shim, 'utf8').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`);
  });

  it('runs with them, with no NODE_OPTIONS to carry them', () => {
    const env = { PATH: `${join(repoRoot, 'node_modules/.bin')}:/usr/bin:/bin`, HOME: '/nonexistent' };
    const r = spawnSync(shim, ['version', '-o', 'json'], { encoding: 'utf8', env, cwd: repoRoot });
    expect(r.status, `${r.error ?? ''} ${r.stderr}`).toBe(0);
    expect(JSON.parse(r.stdout).nodeFlags).toEqual([...NODE_FLAGS]);
  });
});
