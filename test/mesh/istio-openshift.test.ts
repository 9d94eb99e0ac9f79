/**
 * Issue 31 §1: Istio on OpenShift takes the proxy's UID/GID from the namespace (Istio 1.27 pkg/kube/inject
 * GetProxyIDs over OpenShift's ParseBlock, copied into its openshift.go). The ParseBlock rows' expected values are
 * what that Go code returns (run over these inputs with the module's openshift.go, Go 1.26's fmt.Sscanf; 3,000
 * random inputs agreed too); test/e2e/istio-openshift.test.ts proves GetProxyIDs end to end with the real injector.
 */
import { describe, expect, it } from 'vitest';
import { blockEnd, istioOpenShiftProxyIds } from '../../src/mesh/istio-openshift.ts';

/** [annotation value, ParseBlock's End, or undefined where it returns an error] */
const blocks: Array<[string, number | undefined]> = [
  ['1000620000/10000', 1000629999],
  ['1000-2000', 2000],
  [' 5/3', 7],
  ['5 /3', undefined],
  ['5/ 3', 7],
  ['+5/3', undefined],
  ['-5/3', undefined],
  ['0/0', 4294967295],
  ['5/0', 4],
  ['4294967295/2', 0],
  ['4294967296/1', undefined],
  ['1000/10,2000/10', 1009],
  ['1000/10abc', 1009],
  ['abc', undefined],
  ['', undefined],
  ['10', undefined],
  ['1-', undefined],
  ['-1', undefined],
  ['007/003', 9],
  ['5\n/3', undefined],
  ['\n5/3', undefined],
  ['1e3/2', undefined],
  ['99999999999999999999/1', undefined],
  ['1000-', undefined],
  ['  7-9  ', 9],
  ['5\t/3', undefined],
  ['\t5/\t3', 7],
  ['0x10/2', undefined],
  ['3/4/5', 6],
  ['1-2-3', 2],
];

describe("OpenShift's ParseBlock, as Go's fmt.Sscanf reads it", () => {
  it.each(blocks)('%j → %s', (value, end) => {
    expect(blockEnd(value)).toBe(end);
  });
});

const U = 'openshift.io/sa.scc.uid-range';
const G = 'openshift.io/sa.scc.supplemental-groups';

describe('GetProxyIDs: the namespace annotations istiod reads', () => {
  const rows: Array<[string, Record<string, string> | undefined, { uid: number; gid: number }]> = [
    ['no annotations: 1337', undefined, { uid: 1337, gid: 1337 }],
    [
      'OpenShift assigns both the same block',
      { [U]: '1000650000/10000', [G]: '1000650000/10000' },
      { uid: 1000659999, gid: 1000659999 },
    ],
    ['the GID falls back to the UID range', { [U]: '1000650000/10000' }, { uid: 1000659999, gid: 1000659999 }],
    ['groups: the first block of several', { [U]: '2000/10', [G]: '5000/5,9000/5' }, { uid: 2009, gid: 5004 }],
    ['groups with an unreadable block: 1337', { [U]: '2000/10', [G]: '5000/5,x' }, { uid: 2009, gid: 1337 }],
    ['groups present but empty: no fallback, 1337', { [U]: '2000/10', [G]: '' }, { uid: 2009, gid: 1337 }],
    [
      'UID range unreadable: the UID stays 1337, groups still read',
      { [U]: 'abc', [G]: '7000/2' },
      { uid: 1337, gid: 7001 },
    ],
    ['a block ending at 0: the template renders 1337', { [U]: '0/1' }, { uid: 1337, gid: 1337 }],
  ];
  it.each(rows)('%s', (_n, annotations, ids) => {
    expect(istioOpenShiftProxyIds(annotations)).toEqual(ids);
  });
});
