// One node agent configuration for the tests (src/agent/agent.ts AgentConfig): a node's conf and bin dirs, istio-cni on
// containerd, no resync within a test; what a test varies goes in `overrides`.
import type { AgentConfig } from '../../src/agent/agent.ts';

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
