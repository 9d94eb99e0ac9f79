/**
 * Directory-level oracle cases: which file wins (byte-order priorities, extensions, directories), an unparsable
 * first file, max_conf_num, missing and non-executable plugin binaries (CRI-O skips those files), and libcni
 * v1.3's per-network plugin directories. File contents come from test/cni/oracle-cases.ts's helpers.
 */
import { type DirCase, FALLBACK } from './oracle-cases.ts';

const chain = (name: string, ...types: string[]) =>
  JSON.stringify({ cniVersion: '0.4.0', name, plugins: types.map((type) => ({ type })) });
const single = (name: string, type: string) => JSON.stringify({ cniVersion: '0.4.0', name, type });
const BROKEN = '{"name":"broken","plugins":[{"type":"bridge"}'; // truncated: does not parse

function priorityCases(): DirCase[] {
  const meshed = chain('meshed', 'bridge', 'istio-cni');
  const plain = chain('plain', 'ptp');
  const layouts: Array<[string, DirCase['files']]> = [
    ['10 sorts before 9', { '9-a.conflist': plain, '10-b.conflist': meshed }],
    ['upper case sorts first', { 'a.conflist': plain, 'B.conflist': meshed }],
    ['.conf before .conflist of the same stem', { '10-x.conf': single('c', 'ptp'), '10-x.conflist': meshed }],
    ['.json counts', { '05-x.json': single('j', 'ptp'), '10-x.conflist': meshed }],
    [
      'other extensions are ignored',
      { '00-x.conflist.bak': plain, '01-x.yaml': plain, '02-x': plain, '10-x.conflist': meshed },
    ],
    ['a directory named .conf is skipped', { '00-dir.conf': null, '10-x.conflist': meshed }],
    [
      'non-ASCII names sort by bytes',
      { 'é.conflist': plain, 'z.conflist': meshed, 'Z.conflist': chain('Z', 'bridge') },
    ],
    ['an unparsable first file', { '00-broken.conflist': BROKEN, '10-x.conflist': meshed }],
    ['an unparsable second file', { '00-x.conflist': meshed, '10-broken.conflist': BROKEN }],
    ['a conflist in a .conf first', { '00-x.conf': meshed, '10-x.conflist': plain }],
    ['only broken files', { '00-a.conflist': BROKEN, '10-b.conf': '{}' }],
    ['empty conf dir', {}],
    ['hidden file', { '.hidden.conflist': plain, 'x.conflist': meshed }],
    [
      'same network name twice',
      { '10-a.conflist': chain('same', 'ptp'), '20-b.conflist': chain('same', 'bridge', 'istio-cni') },
    ],
    [
      'many files',
      Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [
          `${String(i).padStart(2, '0')}-n.conflist`,
          chain(`n${i}`, i % 2 ? 'bridge' : 'ptp', 'istio-cni'),
        ]),
      ),
    ],
  ];
  const out: DirCase[] = [];
  for (const [id, files] of layouts) {
    for (const maxConfNum of [1, 2, 0]) out.push({ id: `${id} (max_conf_num ${maxConfNum})`, files, maxConfNum });
  }
  return out;
}

/** CRI-O validates each plugin binary (found in the bin dirs in order, regular file, executable). */
function binaryCases(): DirCase[] {
  const files = {
    '10-a.conflist': chain('a', 'bridge', 'istio-cni'),
    '20-b.conflist': chain('b', 'ptp', 'istio-cni'),
    '30-c.conf': single('c', 'ptp'),
  };
  const variants: Array<[string, NonNullable<DirCase['bins']>]> = [
    ['all present', { '0/bridge': 'exec', '0/istio-cni': 'exec', '0/ptp': 'exec' }],
    ['mesh binary missing', { '0/bridge': 'exec', '0/ptp': 'exec' }],
    ['mesh binary not executable', { '0/bridge': 'exec', '0/istio-cni': 'noexec', '0/ptp': 'exec' }],
    ['interface binary missing', { '0/istio-cni': 'exec', '0/ptp': 'exec' }],
    ['binary is a directory', { '0/bridge': 'dir', '0/istio-cni': 'exec', '0/ptp': 'exec' }],
    ['binary in the second bin dir', { '0/bridge': 'exec', '1/istio-cni': 'exec', '1/ptp': 'exec' }],
    [
      'non-executable in the first dir shadows the second',
      { '0/bridge': 'exec', '0/istio-cni': 'noexec', '1/istio-cni': 'exec', '0/ptp': 'exec' },
    ],
    ['nothing installed', { '0/unrelated': 'exec' }],
  ];
  return variants.map(([id, bins]) => ({ id: `binaries: ${id}`, files, bins }));
}

/** libcni ≥ 1.3 reads plugins of a conflist from `<confdir>/<name>/*.conf` (v1.1.1 does not). */
function pluginDirCases(): DirCase[] {
  return [
    {
      id: 'plugin dir: conflist without plugins',
      files: {
        '10-a.conflist': '{"cniVersion":"1.0.0","name":"a"}',
        'a/10-p.conf': single('a', 'bridge'),
        '99-fallback.conflist': FALLBACK,
      },
    },
    {
      id: 'plugin dir: conflist with plugins and a plugin dir',
      files: {
        '10-a.conflist': chain('a', 'bridge'),
        'a/10-p.conf': single('a', 'istio-cni'),
        '99-fallback.conflist': FALLBACK,
      },
    },
    {
      id: 'plugin dir: empty name reads the conf dir itself',
      files: { '10-a.conflist': chain('', 'bridge'), '20-p.conf': single('p', 'istio-cni') },
    },
  ];
}

export function dirCases(): DirCase[] {
  return [...priorityCases(), ...binaryCases(), ...pluginDirCases()];
}
