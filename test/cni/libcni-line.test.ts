/**
 * Which libcni line a node is judged by (src/cni/runtime-version.ts, src/cni/libcni-line.ts): the table from the
 * Node's containerRuntimeVersion, the choice between a flag, the Node and "unknown", and the rule for unknown:
 * verified only when every line agrees, with the evidence saying what each line made of the dir.
 */
import { describe, expect, it } from 'vitest';
import { chooseLine, judgeByLine } from '../../src/cni/libcni-line.ts';
import { parseRuntimeVersion } from '../../src/cni/runtime-version.ts';
import type { LibcniLine, Runtime, ChainVerdict } from '../../src/cni/types.ts';
import { verifyChain } from '../../src/cni/verify.ts';
import { FIXED_NOW, LINE_SPLIT_DIR, memorySnapshot } from './helpers.ts';

describe('containerRuntimeVersion → runtime and libcni line', () => {
  it.each([
    ['containerd://1.6.0', 'containerd', '1.1'],
    ['containerd://1.6.20', 'containerd', '1.1'],
    // Debian bookworm's containerd, as the real-node tier's kubelet reports it.
    ['containerd://1.6.20~ds1', 'containerd', '1.1'],
    ['containerd://1.7.27', 'containerd', '1.1'],
    ['containerd://1.7.27-k3s1', 'containerd', '1.1'],
    ['containerd://2.0.0', 'containerd', '1.2'],
    ['containerd://2.0.5', 'containerd', '1.2'],
    ['containerd://v2.1.4', 'containerd', '1.3'],
    ['containerd://2.1.4', 'containerd', '1.3'],
    ['containerd://2.3.7', 'containerd', '1.3'],
    ['containerd://2.4.2', 'containerd', '1.3'],
    ['containerd://2.5.0', 'containerd', undefined],
    ['containerd://3.0.0', 'containerd', undefined],
    ['containerd://1.5.13', 'containerd', undefined],
    ['cri-o://1.23.4', 'crio', undefined],
    ['cri-o://1.24.0', 'crio', '1.1'],
    ['cri-o://1.30.2', 'crio', '1.1'],
    ['cri-o://1.31.0', 'crio', '1.2'],
    ['cri-o://1.32.13', 'crio', '1.2'],
    ['cri-o://1.33.0', 'crio', '1.3'],
    ['cri-o://1.36.3', 'crio', '1.3'],
    ['cri-o://1.37.0', 'crio', undefined],
    ['docker://24.0.7', undefined, undefined],
    ['remote://1.0', undefined, undefined],
    ['containerd://', undefined, undefined],
    ['containerd://abc', undefined, undefined],
    ['', undefined, undefined],
    ['1.7.27', undefined, undefined],
  ])('%s → %s, libcni %s', (text, runtime, line) => {
    expect(parseRuntimeVersion(text)).toEqual({
      ...(runtime ? { runtime } : {}),
      ...(line ? { line } : {}),
    });
  });
});

describe('chooseLine', () => {
  it.each<[string, Runtime, LibcniLine | 'auto', string | undefined, object]>([
    [
      'the Node names a known release',
      'containerd',
      'auto',
      'containerd://2.1.4',
      { libcni: '1.3', runtimeVersion: 'containerd://2.1.4' },
    ],
    ['not read yet: every line', 'containerd', 'auto', undefined, { libcni: 'all' }],
    ['empty (kwok, a fake kubelet): every line', 'containerd', 'auto', '', { libcni: 'all' }],
    [
      'a release newer than the table: every line',
      'crio',
      'auto',
      'cri-o://1.40.0',
      { libcni: 'all', runtimeVersion: 'cri-o://1.40.0' },
    ],
    ['a flag names the line', 'crio', '1.2', 'cri-o://1.36.0', { libcni: '1.2' }],
    ['a flag without a Node', 'containerd', '1.1', undefined, { libcni: '1.1' }],
    [
      'the Node runs another runtime',
      'containerd',
      'auto',
      'cri-o://1.31.2',
      {
        libcni: 'all',
        runtimeVersion: 'cri-o://1.31.2',
        runtimeMismatch: 'told containerd, the node reports cri-o://1.31.2',
      },
    ],
    [
      'another runtime beats a flag too',
      'crio',
      '1.1',
      'containerd://1.7.2',
      { libcni: 'all', runtimeMismatch: expect.any(String) },
    ],
    [
      'a runtime meshgate does not emulate is not a mismatch',
      'containerd',
      'auto',
      'docker://24.0.7',
      { libcni: 'all' },
    ],
  ])('%s', (_name, runtime, requested, reported, want) => {
    expect(chooseLine(runtime, requested, reported)).toMatchObject(want);
  });
});

/** A verdict per line, as verifyLine would give it. */
function fake(reasons: Record<LibcniLine, ChainVerdict['reason']>): (line: LibcniLine) => ChainVerdict {
  return (line) => ({
    verified: reasons[line] === 'verified',
    reason: reasons[line],
    message: `${reasons[line]} by ${line}`,
    evidence: {
      runtime: 'containerd',
      libcni: line,
      pluginType: 'istio-cni',
      file: `${line}.conflist`,
      plugins: ['bridge', 'istio-cni'],
      candidates: [],
      checkedAt: '2026-01-01T00:00:00.000Z',
    },
  });
}

describe('judgeByLine: an unknown line is verified only when every line agrees', () => {
  it('every line verified → verified, the evidence listing each line', () => {
    const v = judgeByLine({ libcni: 'all' }, fake({ '1.1': 'verified', '1.2': 'verified', '1.3': 'verified' }));
    expect(v).toMatchObject({ verified: true, reason: 'verified', evidence: { libcni: 'all' } });
    expect(v.evidence.lines).toEqual({
      '1.1': { reason: 'verified', file: '1.1.conflist', plugins: ['bridge', 'istio-cni'] },
      '1.2': { reason: 'verified', file: '1.2.conflist', plugins: ['bridge', 'istio-cni'] },
      '1.3': { reason: 'verified', file: '1.3.conflist', plugins: ['bridge', 'istio-cni'] },
    });
  });

  it.each<[string, Record<LibcniLine, ChainVerdict['reason']>, ChainVerdict['reason']]>([
    [
      'one line not verified',
      { '1.1': 'unparsable_first_file', '1.2': 'verified', '1.3': 'verified' },
      'libcni_lines_disagree',
    ],
    [
      'only the newest verified',
      { '1.1': 'mesh_plugin_missing', '1.2': 'mesh_plugin_missing', '1.3': 'verified' },
      'libcni_lines_disagree',
    ],
    [
      'unverified for different reasons',
      { '1.1': 'no_valid_config', '1.2': 'mesh_plugin_missing', '1.3': 'mesh_plugin_missing' },
      'libcni_lines_disagree',
    ],
    [
      'unverified for the same reason',
      { '1.1': 'mesh_plugin_missing', '1.2': 'mesh_plugin_missing', '1.3': 'mesh_plugin_missing' },
      'mesh_plugin_missing',
    ],
  ])('%s → %s', (_name, reasons, want) => {
    const v = judgeByLine({ libcni: 'all' }, fake(reasons));
    expect(v).toMatchObject({ verified: false, reason: want, evidence: { libcni: 'all' } });
    if (want === 'libcni_lines_disagree') {
      for (const line of ['1.1', '1.2', '1.3'] as const)
        expect(v.message).toContain(`libcni ${line}: ${reasons[line]}`);
    }
  });

  it('a known line is judged by that line alone, stamped with the runtime version', () => {
    const v = judgeByLine(
      { libcni: '1.2', runtimeVersion: 'containerd://2.0.5' },
      fake({ '1.1': 'unparsable_first_file', '1.2': 'verified', '1.3': 'mesh_plugin_missing' }),
    );
    expect(v).toMatchObject({ verified: true, evidence: { libcni: '1.2', runtimeVersion: 'containerd://2.0.5' } });
    expect(v.evidence.lines).toBeUndefined();
  });

  it('another runtime than the one emulated is never verified', () => {
    const v = judgeByLine(
      {
        libcni: 'all',
        runtimeVersion: 'cri-o://1.31.2',
        runtimeMismatch: 'told containerd, the node reports cri-o://1.31.2',
      },
      fake({ '1.1': 'verified', '1.2': 'verified', '1.3': 'verified' }),
    );
    expect(v).toMatchObject({
      verified: false,
      reason: 'runtime_mismatch',
      evidence: { runtimeVersion: 'cri-o://1.31.2' },
    });
    expect(v.message).toContain('told containerd, the node reports cri-o://1.31.2');
  });
});

describe("the issue's dir (a string disableCheck in the meshed file) judged per runtime", () => {
  const snapshot = memorySnapshot(LINE_SPLIT_DIR);
  const judge = (runtime: Runtime, version: string | undefined) =>
    judgeByLine(chooseLine(runtime, 'auto', version), (libcni) =>
      verifyChain(snapshot, { runtime, libcni, pluginType: 'istio-cni', maxConfNum: 1, now: FIXED_NOW }),
    );

  it.each<[Runtime, string | undefined, string, string | undefined]>([
    ['crio', 'cri-o://1.30.2', 'mesh_plugin_missing', '20-plain.conflist'],
    ['crio', 'cri-o://1.31.2', 'verified', '10-meshed.conflist'],
    ['crio', 'cri-o://1.34.0', 'verified', '10-meshed.conflist'],
    ['containerd', 'containerd://1.7.27', 'unparsable_first_file', '10-meshed.conflist'],
    ['containerd', 'containerd://2.0.5', 'verified', '10-meshed.conflist'],
    ['containerd', 'containerd://2.1.4', 'verified', '10-meshed.conflist'],
    ['crio', undefined, 'libcni_lines_disagree', '20-plain.conflist'],
    ['containerd', 'containerd://9.0.0', 'libcni_lines_disagree', '10-meshed.conflist'],
  ])('%s %s → %s (%s)', (runtime, version, reason, file) => {
    const v = judge(runtime, version);
    expect(v.reason).toBe(reason);
    expect(v.verified).toBe(reason === 'verified');
    expect(v.evidence.file).toBe(file);
  });

  it('the evidence of an unknown line shows which file each line loads', () => {
    expect(judge('crio', undefined).evidence.lines).toEqual({
      '1.1': { reason: 'mesh_plugin_missing', file: '20-plain.conflist', plugins: ['bridge'] },
      '1.2': { reason: 'verified', file: '10-meshed.conflist', plugins: ['bridge', 'istio-cni'] },
      '1.3': { reason: 'verified', file: '10-meshed.conflist', plugins: ['bridge', 'istio-cni'] },
    });
  });
});
