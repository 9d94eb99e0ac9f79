/**
 * Test helpers for CNI verification: the shared corpus of real CNI files, and real temp directories laid out
 * like a node (net.d + bin) with fake plugin binaries (tiny shell scripts: only their mode bits matter).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BinaryInfo, Snapshot } from '../../src/cni/types.ts';

/** shared/ sits beside the clone (/work/main ↔ /work/shared, same in CI). */
export const CORPUS_DIR = fileURLToPath(new URL('../../../shared/corpus/cni/', import.meta.url));

export function corpus(name: string): string {
  return readFileSync(join(CORPUS_DIR, name), 'utf8');
}

/** Every plugin type the corpus files use, so "binary present" is the default in pure tests. */
export const CORPUS_PLUGINS = [
  'bandwidth',
  'bridge',
  'calico',
  'flannel',
  'istio-cni',
  'linkerd-cni',
  'multus',
  'portmap',
  'prefix-istio-cni',
  'ptp',
  'tuning',
];

export function allBinaries(names: readonly string[] = CORPUS_PLUGINS): Record<string, BinaryInfo> {
  return Object.fromEntries(names.map((n) => [n, { exists: true, executable: true, dir: '/opt/cni/bin' }]));
}

/** An in-memory snapshot of named files: `{ '10-calico.conflist': corpus('…') }`. */
export function memorySnapshot(files: Record<string, string>, binaries = allBinaries()): Snapshot {
  return {
    confDir: '/etc/cni/net.d',
    binDirs: ['/opt/cni/bin'],
    files: Object.entries(files).map(([name, content]) => ({ name, content })),
    binaries,
  };
}

export interface NodeDirs {
  root: string;
  confDir: string;
  binDir: string;
  /** Writes a conf file (content or corpus file name prefixed with "corpus:"); "a/b.conf" makes the subdir. */
  conf(name: string, content: string): string;
  /** Creates an executable (default) or non-executable fake plugin binary. */
  bin(name: string, executable?: boolean, dir?: string): string;
  cleanup(): void;
}

export function nodeDirs(prefix = 'meshgate-cni-'): NodeDirs {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const confDir = join(root, 'net.d');
  const binDir = join(root, 'bin');
  mkdirSync(confDir);
  mkdirSync(binDir);
  return {
    root,
    confDir,
    binDir,
    conf(name, content) {
      const path = join(confDir, name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content.startsWith('corpus:') ? corpus(content.slice('corpus:'.length)) : content);
      return path;
    },
    bin(name, executable = true, dir = binDir) {
      mkdirSync(dir, { recursive: true });
      const path = join(dir, name);
      writeFileSync(path, '#!/bin/sh\necho \'{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}\'\n');
      chmodSync(path, executable ? 0o755 : 0o644);
      return path;
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The example of a dir the libcni lines read differently: the meshed file says `"disableCheck":"true"`,
 * which libcni 1.1 refuses (containerd: unparsable first file; CRI-O skips it and loads the plain file after it)
 * and libcni ≥ 1.2 accepts.
 */
export const LINE_SPLIT_DIR: Record<string, string> = {
  '10-meshed.conflist':
    '{"cniVersion":"0.4.0","name":"k8s","disableCheck":"true","plugins":[{"type":"bridge"},{"type":"istio-cni"}]}',
  '20-plain.conflist': '{"cniVersion":"0.4.0","name":"plain","plugins":[{"type":"bridge"}]}',
};

export const FIXED_NOW = () => new Date('2025-01-02T03:04:05.678Z');
