/**
 * Which libcni line reads a node's CNI files (src/cni/types.ts `LibcniLine`), from what the kubelet reports in the
 * Node's `status.nodeInfo.containerRuntimeVersion` ("containerd://1.7.27", "cri-o://1.31.2"). Kept free of heavy
 * imports: the webhook's node facts use it too (src/facts/node-facts.ts).
 *
 * The table, from each release's go.mod (containerd through the Go module proxy, CRI-O from its repository's tags;
 * go-cni's loop is the same from v1.1.3 to v1.1.14, ocicni's from v0.3.1 to v0.5.1):
 *
 *   containerd 1.6.x    go-cni v1.1.3 / v1.1.6    libcni v1.0.1 (< 1.6.8) / v1.1.1   → 1.1
 *   containerd 1.7.x    go-cni v1.1.9             libcni v1.1.2                      → 1.1
 *   containerd 2.0.x    go-cni v1.1.10 / v1.1.12  libcni v1.2.3                      → 1.2
 *   containerd 2.1–2.3  go-cni v1.1.12 / v1.1.13  libcni v1.3.0                      → 1.3
 *   containerd 2.4.x    go-cni v1.1.14            libcni v1.3.1                      → 1.3
 *   CRI-O 1.24–1.30     ocicni v0.3.1–v0.4.2      libcni v1.1.0–v1.1.2               → 1.1
 *   CRI-O 1.31–1.32     ocicni v0.4.2 / v0.4.3    libcni v1.2.3                      → 1.2
 *   CRI-O 1.33–1.36     ocicni v0.4.3 / v0.5.0    libcni v1.3.0                      → 1.3
 *
 * Anything else — older or newer releases than these (a newer one may bring a libcni that reads files in a way
 * no line here does), another runtime, an empty string — is unknown (src/cni/libcni-line.ts: every line must
 * agree).
 */
import type { LibcniLine, Runtime } from './types.ts';

interface Release {
  runtime: Runtime;
  /** Inclusive [major, minor] bounds. */
  from: readonly [number, number];
  to: readonly [number, number];
  line: LibcniLine;
}

export const RELEASES: readonly Release[] = [
  { runtime: 'containerd', from: [1, 6], to: [1, 7], line: '1.1' },
  { runtime: 'containerd', from: [2, 0], to: [2, 0], line: '1.2' },
  { runtime: 'containerd', from: [2, 1], to: [2, 4], line: '1.3' },
  { runtime: 'crio', from: [1, 24], to: [1, 30], line: '1.1' },
  { runtime: 'crio', from: [1, 31], to: [1, 32], line: '1.2' },
  { runtime: 'crio', from: [1, 33], to: [1, 36], line: '1.3' },
];

/** The runtime names as the kubelet reports them (the CRI's RuntimeName). */
const SCHEMES: Record<string, Runtime> = { containerd: 'containerd', 'cri-o': 'crio' };

export interface RuntimeVersion {
  /** The runtime, when the scheme is one meshgate emulates. */
  runtime?: Runtime;
  /** Its libcni line, when the release is in the table. */
  line?: LibcniLine;
}

/** `containerd://2.1.4` → containerd, 1.3. Suffixes after the version (`-k3s1`, `+rke2`) are allowed. */
export function parseRuntimeVersion(text: string): RuntimeVersion {
  const m = /^([a-z0-9.-]+):\/\/v?(\d+)\.(\d+)(?:[.+~-].*)?$/.exec(text.trim());
  const runtime = m ? SCHEMES[m[1]] : undefined;
  if (!m || !runtime) return {};
  const at = [Number(m[2]), Number(m[3])];
  const release = RELEASES.find((r) => r.runtime === runtime && compare(at, r.from) >= 0 && compare(at, r.to) <= 0);
  return release ? { runtime, line: release.line } : { runtime };
}

function compare(a: readonly number[], b: readonly number[]): number {
  return a[0] - b[0] || a[1] - b[1];
}
