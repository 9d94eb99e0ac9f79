/**
 * CNI chain verification, shared by the node agent, `meshgate check-node` and anything else that needs to know
 * whether a node's runtime will run the mesh plugin: read a snapshot once, judge it purely.
 */
export { readSnapshot } from './snapshot.ts';
export { verifyChain, chainOf, verdictMessage, findPlaceholder } from './verify.ts';
export {
  selectNetwork,
  sortedConfFiles,
  isConfFileName,
  binaryProblems,
  CONF_EXTENSIONS,
  MAX_CONF_FILE_BYTES,
} from './runtime.ts';
export { parseNetworkFile, parseConf, parseConfList } from './parse.ts';
export { chooseLine, judgeByLine, type LineChoice } from './libcni-line.ts';
export { parseRuntimeVersion, RELEASES } from './runtime-version.ts';
export { CNI_REASONS, CNI_ADVICE, cniAdviceFor, isCniReasonCode, type CniReasonCode } from './reasons.ts';
export { followMultus, additionalNetwork, MULTUS_TYPES } from './multus.ts';
export { ciliumRenamed, CILIUM_SUFFIX } from './cilium.ts';
export { LIBCNI_LINES, RUNTIMES } from './types.ts';
export type {
  LibcniLine,
  LineEvidence,
  PluginDir,
  Runtime,
  Snapshot,
  ConfFileEntry,
  BinaryInfo,
  VerifyOptions,
  ChainVerdict,
  Evidence,
  Candidate,
  CandidateOutcome,
} from './types.ts';
