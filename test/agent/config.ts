// One node agent configuration for the tests (src/agent/agent.ts AgentConfig): a node's conf and bin dirs, istio-cni on
// containerd, no resync within a test; what a test varies goes in `overrides`. And perTest: what a test started, cleaned
// up after it.
import { afterEach } from 'vitest';
import type { AgentConfig, NodeAgent } from '../../src/agent/agent.ts';
import type { NodeDirs } from '../cni/helpers.ts';

export function agentConfig(
  dirs: { confDir: string; binDir: string },
  overrides: Partial<AgentConfig> = {},
): AgentConfig {
  return {
    nodeName: 'node-1',
    confDir: dirs.confDir,
    binDirs: [dirs.binDir],
    pluginType: 'istio-cni',
    runtime: 'containerd',
    libcni: 'auto',
    maxConfNum: 1,
    resyncMs: 300_000,
    debounceMs: 20,
    taintUnverified: false,
    ...overrides,
  };
}

/**
 * The node dirs and node agent of the test running now, kept in one place: a test sets them as it makes them, and
 * after each test (this registers the file's afterEach) the agent is stopped and the dirs are removed.
 */
export function perTest(): { dirs: NodeDirs; agent: NodeAgent | undefined } {
  const t = {} as { dirs: NodeDirs; agent: NodeAgent | undefined };
  afterEach(async () => {
    await t.agent?.stop();
    t.agent = undefined;
    t.dirs?.cleanup();
  });
  return t;
}
