/**
 * What the node agent publishes for one read of the dirs: the chain verdict (with the mesh plugin's own settings,
 * src/cni/plugin-config.ts) judged by the libcni line of the runtime its Node reports in
 * `status.nodeInfo.containerRuntimeVersion` (src/cni/libcni-line.ts), or by every line when that is not known or
 * not yet read. Pure, like the verdict itself.
 */
import { chooseLine, judgeByLine } from '../cni/libcni-line.ts';
import { type RedirectExpectations, verifyWithPluginConfig } from '../cni/plugin-config.ts';
import type { LibcniLine, MultusOptions, Runtime, Snapshot, ChainVerdict } from '../cni/types.ts';
import { type AmbientFacts, withAmbient } from '../cni/ambient.ts';

export interface JudgeConfig {
  runtime: Runtime;
  /** A line named by --libcni, or 'auto': the Node's runtime version decides. */
  libcni: LibcniLine | 'auto';
  pluginType: string;
  maxConfNum: number;
  expect?: RedirectExpectations;
  /** How to follow Multus (its path aliases, the OpenShift model's network). */
  multus?: MultusOptions;
}

export function judgeSnapshot(
  snapshot: Snapshot,
  config: JudgeConfig,
  containerRuntimeVersion: string | undefined,
  now: () => Date,
  /** With ambient checks on: what the agent saw of istio-cni's node agent and ztunnel (src/cni/ambient.ts). */
  ambient?: AmbientFacts,
): ChainVerdict {
  const choice = chooseLine(config.runtime, config.libcni, containerRuntimeVersion);
  const { runtime, pluginType, maxConfNum, expect, multus } = config;
  return judgeByLine(choice, (libcni) => {
    const options = { runtime, libcni, pluginType, maxConfNum, now, multus };
    const verdict = verifyWithPluginConfig(snapshot, options, expect);
    return ambient ? withAmbient(verdict, snapshot, options, ambient) : verdict;
  });
}
