/**
 * The node agent re-reads the conf dir on every file event, so a large file must stay cheap: a conflist of just
 * under meshgate's 2 MiB read limit, read from disk and verified. The time is printed, not asserted (timing
 * assertions flake on a shared 2-core machine). Also: a file over the limit is judged fail-closed.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CONF_FILE_BYTES } from '../../src/cni/runtime.ts';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import { verifyChain } from '../../src/cni/verify.ts';
import { nodeDirs, type NodeDirs } from './helpers.ts';

let dirs: NodeDirs;
afterEach(() => dirs?.cleanup());

/** A conflist of exactly `size` bytes: real plugins padded with an unknown key holding many small objects. */
function conflistOfSize(size: number): string {
  const head = '{"cniVersion":"1.0.0","name":"k8s","plugins":[{"type":"bridge","routes":[';
  const tail = ']},{"type":"istio-cni"}]}';
  const item = '{"dst":"10.1.2.0/24","gw":"10.0.0.1","mtu":1500},';
  let body = item.repeat(Math.floor((size - head.length - tail.length) / item.length)).slice(0, -1);
  body += ' '.repeat(size - head.length - tail.length - body.length);
  return head + body + tail;
}

const opts = { runtime: 'containerd' as const, libcni: '1.1' as const, pluginType: 'istio-cni', maxConfNum: 1 };

describe('large configuration files', () => {
  it('verifies a 2 MiB conflist (prints the time)', async () => {
    dirs = nodeDirs();
    const text = conflistOfSize(MAX_CONF_FILE_BYTES);
    expect(Buffer.byteLength(text)).toBe(MAX_CONF_FILE_BYTES);
    dirs.conf('10-k8s.conflist', text);
    for (const b of ['bridge', 'istio-cni']) dirs.bin(b);
    const times: number[] = [];
    let verdict: ReturnType<typeof verifyChain> | undefined;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      verdict = verifyChain(await readSnapshot(dirs.confDir, [dirs.binDir]), opts);
      times.push(performance.now() - t0);
    }
    const t0 = performance.now();
    JSON.parse(text);
    const jsonParse = performance.now() - t0;
    console.log(
      `2 MiB conflist read + verified: ${times.map((t) => t.toFixed(1)).join(', ')} ms (JSON.parse alone ${jsonParse.toFixed(1)} ms)`,
    );
    expect(verdict?.reason).toBe('verified');
  });

  it.each(['containerd', 'crio'] as const)(
    "a file over the limit stops %s's selection as unreadable (fail closed)",
    async (runtime) => {
      dirs = nodeDirs();
      dirs.conf('00-big.conflist', conflistOfSize(MAX_CONF_FILE_BYTES + 1));
      dirs.conf('10-k8s.conflist', '{"name":"k8s","plugins":[{"type":"bridge"},{"type":"istio-cni"}]}');
      for (const b of ['bridge', 'istio-cni', 'ptp']) dirs.bin(b);
      const v = verifyChain(await readSnapshot(dirs.confDir, [dirs.binDir]), { ...opts, runtime });
      expect(v.reason).toBe('unreadable');
      expect(v.evidence.file).toBe('00-big.conflist');
      expect(v.evidence.candidates.map((c) => c.outcome)).toEqual(['unreadable', 'not_considered']);
    },
  );
});
