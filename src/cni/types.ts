/**
 * The data the CNI chain verification works on and produces. Reading the disk fills a `Snapshot`
 * (src/cni/snapshot.ts); everything after that is pure (src/cni/verify.ts), so the node agent, the
 * `check-node` CLI and the tests share one decision.
 */
import type { CniReasonCode } from './reasons.ts';

/** The container runtimes whose network-config selection we emulate (see src/cni/runtime.ts). */
export type Runtime = 'containerd' | 'crio';
export const RUNTIMES: readonly Runtime[] = ['containerd', 'crio'];

/**
 * The libcni release lines whose reading of a conf dir differs (each difference is listed in src/cni/parse.ts):
 * 1.1 (v1.0.1–v1.1.2: containerd 1.6/1.7, CRI-O ≤ 1.30), 1.2 (v1.2.3: containerd 2.0, CRI-O 1.31/1.32) and
 * 1.3 (v1.3.0/v1.3.1: containerd ≥ 2.1, CRI-O ≥ 1.33). Which line a node runs: src/cni/libcni-line.ts.
 */
export type LibcniLine = '1.1' | '1.2' | '1.3';
export const LIBCNI_LINES: readonly LibcniLine[] = ['1.1', '1.2', '1.3'];

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

/**
 * `<confdir>/<name>` for a conflist named `name`, whose `*.conf` files libcni ≥ 1.3 appends to its plugins: the
 * files (`.conf` only, not directories, read like the conf dir's), or that it does not exist (no plugins added),
 * could not be listed (the conflist fails to load), or lies outside the conf dir (a name with "..": meshgate does
 * not read it and judges such a conflist fail-closed).
 */
export type PluginDir = { name: string } & (
  | { path?: string; files: ConfFileEntry[] }
  | { path?: string; missing: true }
  | { path?: string; error: string }
  | { outside: true }
);

/**
 * A directory besides the conf dir that Multus reads (its `confDir`, the dir of a `clusterNetwork` file), read like
 * the conf dir: its `.conf`/`.conflist`/`.json` files and the per-network plugin dirs of its conflists. `path` is
 * the path on the host (the node agent mounts it at the same path).
 */
export interface NetDir {
  path: string;
  files: ConfFileEntry[];
  missing?: boolean;
  error?: string;
  pluginDirs?: PluginDir[];
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
  /** The per-network plugin dir of every conflist whose `name` is a string (see PluginDir). */
  pluginDirs?: PluginDir[];
  /** Multus' directories, when the agent was told to read them (--multus-dir), in the order given. */
  extraDirs?: NetDir[];
  /**
   * Files of the conf dir that Cilium renamed away (`<name>.cilium_bak`, `<name>` a `.conf`/`.conflist`/`.json`
   * name): what its agent does with every other CNI configuration when `cni.exclusive` is true (src/cni/cilium.ts).
   */
  renamed?: ConfFileEntry[];
}

/** A path as Multus' configuration writes it (`from`, e.g. inside the Multus daemon's container) → on the host. */
export interface PathAlias {
  from: string;
  to: string;
}

/** How to follow Multus when it is the network the runtime loads (src/cni/multus.ts). */
export interface MultusOptions {
  /** Prefix rewrites for the paths in Multus' configuration; the longest matching `from` wins. */
  paths: readonly PathAlias[];
  /**
   * The OpenShift model: the mesh plugin runs as this additional network (`namespace/name` of the
   * NetworkAttachmentDefinition every meshed pod lists in `k8s.v1.cni.cncf.io/networks`), not in the default chain.
   */
  network?: string;
}

export interface VerifyOptions {
  runtime: Runtime;
  /** Whose reading of the files to apply. */
  libcni: LibcniLine;
  /** The mesh plugin's `type`, e.g. `istio-cni` or `linkerd-cni`; matched exactly (it is the binary's name). */
  pluginType: string;
  /** containerd's `max_conf_num` (containerd default 1; 0 = no limit). Ignored for CRI-O. */
  maxConfNum: number;
  /** Clock for `evidence.checkedAt`; defaults to the system clock. */
  now?: () => Date;
  /** How to follow Multus; without it, Multus' paths are taken as host paths and no additional network counts. */
  multus?: MultusOptions;
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
  /**
   * The libcni line the verdict was judged by, or "all" when the runtime's line is unknown: then every line had
   * to agree, and `lines` says what each made of the dir.
   */
  libcni: LibcniLine | 'all';
  /** The Node's `containerRuntimeVersion` the line was derived from (absent when a flag named the line). */
  runtimeVersion?: string;
  /** With `libcni: "all"`: each line's reason, file and chain. */
  lines?: Partial<Record<LibcniLine, LineEvidence>>;
  pluginType: string;
  /** The file the runtime takes its default network from, when there is one. */
  file?: string;
  /** sha256 (hex) of that file's text as UTF-8. */
  sha256?: string;
  /** Plugin types of the selected network, in the order the runtime runs them on ADD. */
  plugins: string[];
  /** Files of libcni 1.3's per-network plugin dir whose plugins were appended to the chain, as `name/file`. */
  pluginFiles?: string[];
  /** Every `.conf`/`.conflist`/`.json` file in sorted order and what the runtime does with it. */
  candidates: Candidate[];
  /** The selected file is Multus': what it runs for the pod (then `plugins` is that chain, not `[multus]`). */
  multus?: MultusEvidence;
  /** Files Cilium renamed to `*.cilium_bak` (cni.exclusive), when there are any. */
  renamed?: string[];
  /** With the node agent's ambient checks (src/cni/ambient.ts): what it saw of Istio ambient's node components. */
  ambient?: { ambientEnabled: boolean; agent: string; ztunnel: string };
  /** When the verification ran (ISO 8601). Not part of the "did anything change" comparison. */
  checkedAt: string;
}

/** What Multus runs for a pod, as meshgate followed it (src/cni/multus.ts). */
export interface MultusEvidence {
  /** The Multus plugin the runtime runs: `multus` (thin plugin) or `multus-shim` (thick: its daemon delegates). */
  type: string;
  /** Where the pod's default network comes from: `clusterNetwork` (as written, `network`), or `delegates[0]`. */
  by: 'clusterNetwork' | 'delegates';
  network?: string;
  /** The file Multus reads that network from (on the host), absent for an inline delegate. */
  file?: string;
  sha256?: string;
  /** The OpenShift model: the additional network that runs the mesh plugin, and the file Multus takes it from. */
  additional?: { network: string; file?: string; plugins: string[] };
}

/** One line's judgment, as listed in the evidence of a verdict that needed every line to agree. */
export interface LineEvidence {
  reason: CniReasonCode;
  file?: string;
  plugins: string[];
}

export interface ChainVerdict {
  verified: boolean;
  reason: CniReasonCode;
  /** The reason's sentence, plus the file and the specific detail: one line for people. */
  message: string;
  /** The specific fact behind the reason (which binary, which parse error, …), when there is one. */
  detail?: string;
  evidence: Evidence;
}
