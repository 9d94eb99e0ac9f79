/**
 * Oracle cases aimed at what the libcni lines read differently (src/cni/parse.ts lists the differences):
 * `cniVersions` (parsing, filtering above 1.1.0, the sort's tie between spellings), the string booleans
 * `disableCheck`/`disableGC`/`loadOnlyInlinedPlugins`, and libcni 1.3's per-network plugin dirs. Every version
 * these cases can leave in `cniVersion` is in FAKE_VERSIONS, which the fake plugins claim to support, so CRI-O's
 * VERSION check (which meshgate cannot run) never decides a case.
 */
import { type DirCase, FALLBACK } from './oracle-cases.ts';

/** What the fake plugin binaries answer to VERSION: every spelling a case below can make the list's version. */
export const FAKE_VERSIONS = [
  ...['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
  ...['1.0', '01.0.0', '+1.0.0', '1', '2.0.0', 'x'],
];

const MESHED = '[{"type":"bridge"},{"type":"istio-cni"}]';
const conflist = (extra: string, plugins = MESHED) =>
  `{"cniVersion":"0.4.0","name":"net",${extra}${extra ? ',' : ''}"plugins":${plugins}}`;
const one = (id: string, text: string): DirCase => ({
  id: `lines: ${id}`,
  files: { '10-case.conflist': text, '99-fallback.conflist': FALLBACK },
});

function cniVersionsCases(): DirCase[] {
  const lists = [
    '["0.3.1","1.0.0"]',
    '["1.1.0","2.0.0"]',
    '["2.0.0"]',
    '["1.0","1.0.0"]',
    '["1.0.0","1.0"]',
    // 11 entries and cniVersion: Go's insertion sort decides which spelling of 1.0.0 is last.
    '["1.0","0.4.0","1.0.0","1.0","0.3.1","1.0.0","+1.0.0","01.0.0","0.2.0","1.0","1.0.0"]',
    // 13 with cniVersion (pdqsort), the top version spelled once.
    '["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0","1.0.0","0.1.0","0.2.0","0.3.0","0.3.1","1.1.0"]',
    '["1"]',
    '["+1.0.0"]',
    '["01.0.0","0.4.0"]',
    '["1.0.0.0"]',
    '["v1.0.0"]',
    '["1.0.0-rc1"]',
    '["1..0"]',
    '["99999999999999999999"]',
    '[""]',
    '[]',
    'null',
    '{}',
    '"1.0.0"',
  ];
  const out = lists.map((l) => one(`cniVersions ${l}`, conflist(`"cniVersions":${l}`)));
  // cniVersion itself is parsed only when cniVersions is there.
  out.push(
    one('cniVersion "x" with cniVersions []', `{"cniVersion":"x","cniVersions":[],"name":"n","plugins":${MESHED}}`),
  );
  out.push(
    one(
      'cniVersion "2.0.0" lowered by cniVersions',
      `{"cniVersion":"2.0.0","cniVersions":["1.0.0"],"name":"n","plugins":${MESHED}}`,
    ),
  );
  out.push(one('no cniVersion, cniVersions [""]', `{"cniVersions":[""],"name":"n","plugins":${MESHED}}`));
  out.push(one('CNIVERSIONS is not cniVersions', conflist('"CNIVERSIONS":[1]')));
  return out;
}

function booleanCases(): DirCase[] {
  const out: DirCase[] = [];
  for (const key of ['disableCheck', 'disableGC', 'loadOnlyInlinedPlugins']) {
    for (const v of ['true', 'false', '"True"', '"FALSE"', '"yes"', '""', '0', 'null', '[]']) {
      out.push(one(`${key}=${v}`, conflist(`"${key}":${v}`)));
    }
  }
  return out;
}

/** The issue's example: the same dir makes CRI-O pick an unmeshed file on libcni 1.1 and the meshed one on 1.2+. */
function issueCase(): DirCase {
  return {
    id: 'lines: disableCheck "true" in the meshed file, a plain file after it',
    files: {
      '10-meshed.conflist': conflist('"disableCheck":"true"'),
      '20-plain.conflist': '{"cniVersion":"0.4.0","name":"plain","plugins":[{"type":"bridge"}]}',
    },
  };
}

const single = (type: string, extra = '') => `{"cniVersion":"0.4.0","name":"p","type":"${type}"${extra}}`;
const chainOf = (name: string, plugins: string) => `{"cniVersion":"1.0.0","name":${JSON.stringify(name)}${plugins}}`;

/** libcni 1.3 appends `<confdir>/<name>/*.conf`; the other lines read only the file. */
function pluginDirCases(): DirCase[] {
  const bridge = ',"plugins":[{"type":"bridge"}]';
  const dir = (id: string, files: DirCase['files']): DirCase => ({
    id: `plugin dir: ${id}`,
    files: { ...files, '99-fallback.conflist': FALLBACK },
  });
  return [
    dir('the mesh plugin only in the plugin dir', {
      '10-a.conflist': chainOf('a', bridge),
      'a/10-istio.conf': single('istio-cni'),
    }),
    dir('two plugin files, in name order', {
      '10-a.conflist': chainOf('a', ''),
      'a/20-istio.conf': single('istio-cni'),
      'a/10-bridge.conf': single('bridge'),
    }),
    dir('loadOnlyInlinedPlugins true ignores the dir', {
      '10-a.conflist': chainOf('a', `,"loadOnlyInlinedPlugins":true${bridge}`),
      'a/10-istio.conf': single('istio-cni'),
    }),
    dir('loadOnlyInlinedPlugins "TRUE" without plugins', {
      '10-a.conflist': chainOf('a', ',"loadOnlyInlinedPlugins":"TRUE"'),
      'a/10-istio.conf': single('istio-cni'),
    }),
    dir('no plugins and no dir', { '10-a.conflist': chainOf('a', '') }),
    dir('no plugins, an empty dir', { '10-a.conflist': chainOf('a', ''), 'a/x.txt': 'not a plugin' }),
    dir('empty plugins list and a dir', {
      '10-a.conflist': chainOf('a', ',"plugins":[]'),
      'a/10-p.conf': single('bridge'),
    }),
    dir('a broken plugin file', { '10-a.conflist': chainOf('a', bridge), 'a/10-p.conf': '{"type":' }),
    dir('a plugin file without type', { '10-a.conflist': chainOf('a', bridge), 'a/10-p.conf': '{"name":"x"}' }),
    dir('a plugin file holding a list', { '10-a.conflist': chainOf('a', bridge), 'a/10-p.conf': chainOf('x', bridge) }),
    dir('only .conf files count', {
      '10-a.conflist': chainOf('a', bridge),
      'a/10-p.conflist': single('istio-cni'),
      'a/10-p.json': single('istio-cni'),
      'a/10-p.conf.bak': single('istio-cni'),
    }),
    dir('a directory named .conf is skipped', { '10-a.conflist': chainOf('a', bridge), 'a/10-d.conf': null }),
    dir('the plugin dir is a file', { '10-a.conflist': chainOf('a', bridge), a: 'not a dir' }),
    dir('a nested name', { '10-a.conflist': chainOf('x/y', bridge), 'x/y/10-p.conf': single('istio-cni') }),
    dir('name "." reads the conf dir', { '10-a.conflist': chainOf('.', bridge), '20-p.conf': single('istio-cni') }),
    dir('duplicate type keys, read in document order', {
      '10-a.conflist': chainOf('a', bridge),
      'a/10-p.conf': '{"type":"istio-cni","TYPE":"ptp"}',
    }),
    dir('a number beyond float64 in an unknown key', {
      '10-a.conflist': chainOf('a', bridge),
      'a/10-p.conf': single('istio-cni', ',"mtu":1e400'),
    }),
    dir('a number beyond float64 in prevResult', {
      '10-a.conflist': chainOf('a', bridge),
      'a/10-p.conf': single('istio-cni', ',"prevResult":{"x":[1e400]}'),
    }),
    dir('valid-attachments of the wrong type', {
      '10-a.conflist': chainOf('a', bridge),
      'a/10-p.conf': single('istio-cni', ',"CNI.DEV/VALID-ATTACHMENTS":{}'),
    }),
    dir('valid-attachments well formed', {
      '10-a.conflist': chainOf('a', bridge),
      'a/10-p.conf': single('istio-cni', ',"cni.dev/valid-attachments":[{"containerID":"c","ifname":"eth0"},null]'),
    }),
    dir('a plugin binary missing for a dir plugin (CRI-O skips the file)', {
      '10-a.conflist': chainOf('a', bridge),
      'a/10-p.conf': single('missing-plugin'),
    }),
  ];
}

/** Cases where meshgate must refuse to judge (fail closed) rather than agree: `failClosed` says why. */
export function failClosedCases(): Array<DirCase & { failClosed: string }> {
  return [
    {
      id: 'plugin dir: a name leading outside the conf dir',
      files: {
        '10-a.conflist': chainOf('../elsewhere', ',"plugins":[{"type":"bridge"}]'),
        '99-fallback.conflist': FALLBACK,
      },
      failClosed: 'libcni 1.3 reads <confdir>/../elsewhere, which the node agent cannot see',
    },
  ];
}

export function lineCases(): DirCase[] {
  return [...cniVersionsCases(), ...booleanCases(), issueCase(), ...pluginDirCases()];
}
