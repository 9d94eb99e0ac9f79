/**
 * The data the CNI chain verification works on and produces. Reading the disk fills a `Snapshot`
 * (src/cni/snapshot.ts); everything after that is pure (src/cni/verify.ts), so the node agent, the
 * `check-node` CLI and the tests share one decision.
 */
import type { ReasonCode } from './reasons.ts';

/** The container runtimes whose network-config selection we emulate (see src/cni/runtime.ts). */
export type Runtime = 'containerd' | 'crio';
export const RUNTIMES: readonly Runtime[] = ['containerd', 'crio'];

/**
 * One file of the conf dir whose name ends in `.conf`, `.conflist` or `.json`: its bytes or why it could not be
 * read.
 */
export interface ConfFileEntry {
  name: string;
  /** The file's bytes as read (a string is taken as its UTF-8 encoding, for tests). */
  content?: string | Uint8Array;
  /** Short error (`ENOENT: no such file or directory`, `not a regular file`, …) when the file could not be read. */
  readError?: string;
  /** Not read because it is larger than meshgate's limit (MAX_CONF_FILE_BYTES); the runtime WOULD read it. */
  oversize?: boolean;
}

/** What the runtime would find when it looks a plugin up by name in the bin dir(s). */
export interface BinaryInfo {
  exists: boolean;
  /** Any execute bit set: the runtime runs plugins as root, for which one x bit is enough. */
  executable: boolean;
  /** The bin dir it was found in (the first one that has it, as libcni's FindInPath). */
  dir?: string;
}

/** The conf dir and bin dir(s) as read at one moment. */
export interface Snapshot {
  confDir?: string;
  binDirs?: string[];
  /** The conf dir does not exist (libcni treats that as "no configuration", not as an error). */
  dirMissing?: boolean;
  /** The conf dir exists but could not be listed (EACCES, ENOTDIR, …). */
  dirError?: string;
  files: ConfFileEntry[];
  /** Regular files of the bin dir(s), by name. A plugin absent from this map has no binary. */
  binaries: Record<string, BinaryInfo>;
  /** Bin dirs that could not be listed, with the error. */
  binDirErrors?: Record<string, string>;
}

export interface VerifyOptions {
  runtime: Runtime;
  /** The mesh plugin's `type`, e.g. `istio-cni` or `linkerd-cni`; matched exactly (it is the binary's name). */
  pluginType: string;
  /** containerd's `max_conf_num` (containerd default 1; 0 = no limit). Ignored for CRI-O. */
  maxConfNum: number;
  /** Clock for `evidence.checkedAt`; defaults to the system clock. */
  now?: () => Date;
}

/** Why a candidate file was or was not used, in the runtime's own order. */
export type CandidateOutcome =
  | 'selected' // the runtime's default network comes from this file
  | 'loaded' // containerd with max_conf_num > 1: an additional network
  | 'unreadable'
  | 'unparsable'
  | 'binary_missing' // CRI-O skips files whose plugin binaries are missing
  | 'binary_not_executable' // … or cannot be executed
  | 'not_considered'; // after the selected file, or beyond max_conf_num

export interface Candidate {
  file: string;
  outcome: CandidateOutcome;
  detail?: string;
}

/** What the verdict is based on; published as compact JSON in the Node annotation `meshgate.io/cni-evidence`. */
export interface Evidence {
  runtime: Runtime;
  pluginType: string;
  /** The file the runtime takes its default network from, when there is one. */
  file?: string;
  /** sha256 (hex) of that file's text as UTF-8. */
  sha256?: string;
  /** Plugin types of the selected network, in the order the runtime runs them on ADD. */
  plugins: string[];
  /** Every `.conf`/`.conflist`/`.json` file in sorted order and what the runtime does with it. */
  candidates: Candidate[];
  /** When the verification ran (ISO 8601). Not part of the "did anything change" comparison. */
  checkedAt: string;
}

export interface Verdict {
  verified: boolean;
  reason: ReasonCode;
  /** The reason's sentence, plus the file and the specific detail: one line for people. */
  message: string;
  /** The specific fact behind the reason (which binary, which parse error, …), when there is one. */
  detail?: string;
  evidence: Evidence;
}
