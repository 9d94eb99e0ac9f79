/**
 * The edge cases the CNI oracle test runs through both the real libcni/go-cni and meshgate: deterministic
 * (fixed lists plus a seeded generator), each a conf dir with its files. File-content cases are written twice,
 * as `10-case.conflist` and `10-case.conf`, each followed by `99-fallback.conflist` so CRI-O's skipping shows.
 * Directory-level cases (priorities, binaries, max_conf_num) are in test/cni/oracle-dirs.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS_DIR } from './helpers.ts';
import { mulberry32 } from '../support/random.ts';

export interface DirCase {
  id: string;
  /** Conf dir content by relative path ("a/b.conf" creates the subdir); a `null` makes an empty directory. */
  files: Record<string, string | Buffer | null>;
  /** Own bin dirs: "0/bridge" → bin dir 0. Absent: the shared bin dir holding every STANDARD_PLUGINS binary. */
  bins?: Record<string, 'exec' | 'noexec' | 'dir'>;
  maxConfNum?: number;
}

/** Plugin binaries in the shared bin dir. */
export const STANDARD_PLUGINS = [
  'bandwidth',
  'bridge',
  'calico',
  'flannel',
  'host-local',
  'istio-cni',
  'linkerd-cni',
  'loopback',
  'multus',
  'portmap',
  'prefix-istio-cni',
  'ptp',
  'tuning',
];

export const FALLBACK = '{"cniVersion":"0.4.0","name":"fallback","plugins":[{"type":"bridge"},{"type":"istio-cni"}]}';

/** One file content, tried as a conflist and as a conf. */
function asBoth(id: string, content: string | Buffer): DirCase[] {
  return ['conflist', 'conf'].map((ext) => ({
    id: `${id} [.${ext}]`,
    files: { [`10-case.${ext}`]: content, '99-fallback.conflist': FALLBACK },
  }));
}

/** An object's text from entries, so duplicate keys and raw values (1e400, invalid UTF-8) can be written. */
const obj = (...entries: Array<[string, string]>) =>
  `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
const q = (s: string) => JSON.stringify(s);
const list = (...plugins: string[]) =>
  obj(['cniVersion', q('0.4.0')], ['name', q('net')], ['plugins', `[${plugins.join(',')}]`]);

/** Values of every JSON kind, to put where a field wants another. */
const WRONG = [
  '1',
  '-0',
  'true',
  'false',
  '"s"',
  '""',
  '[]',
  '["x"]',
  '[1]',
  '[null]',
  '{}',
  '{"a":1}',
  '{"type":"bridge"}',
  'null',
];

/** The NetConf fields libcni decodes, as [field path, a valid value]. */
const NETCONF_FIELDS: Array<[string[], string]> = [
  [['cniVersion'], '"0.4.0"'],
  [['name'], '"n"'],
  [['type'], '"bridge"'],
  [['capabilities'], '{"portMappings":true}'],
  [['capabilities', 'portMappings'], 'true'],
  [['ipam'], '{"type":"host-local"}'],
  [['ipam', 'type'], '"host-local"'],
  [['dns'], '{}'],
  [['dns', 'nameservers'], '["10.0.0.1"]'],
  [['dns', 'domain'], '"d"'],
  [['dns', 'search'], '["s"]'],
  [['dns', 'options'], '["o"]'],
  [['prevResult'], '{"cniVersion":"0.4.0"}'],
  [['cni.dev/valid-attachments'], '[{"containerID":"c","ifname":"eth0"}]'],
];

function pluginWith(path: string[], value: string): string {
  if (path.length === 1)
    return path[0] === 'type' ? obj(['type', value]) : obj(['type', q('bridge')], [path[0], value]);
  return obj(['type', q('bridge')], [path[0], obj([path[1], value])]);
}

function fieldTypeCases(): DirCase[] {
  const out: DirCase[] = [];
  for (const [path, valid] of NETCONF_FIELDS) {
    // A cniVersion the plugin does not support makes CRI-O skip the file after running the binary's VERSION
    // command, which meshgate cannot do (see src/cni/runtime.ts): only versions the fake binaries support here.
    for (const value of [valid, ...WRONG].filter((v) => path[0] !== 'cniVersion' || v !== '"s"')) {
      const plugin = pluginWith(path, value);
      out.push(...asBoth(`plugin ${path.join('.')}=${value}`, plugin));
      out.push({
        id: `conflist plugin ${path.join('.')}=${value}`,
        files: { '10-case.conflist': list(plugin, obj(['type', q('portmap')])), '99-fallback.conflist': FALLBACK },
      });
    }
  }
  for (const field of [
    'name',
    'cniVersion',
    'disableCheck',
    'plugins',
    'cniVersions',
    'disableGC',
    'loadOnlyInlinedPlugins',
  ]) {
    const strings = field === 'cniVersion' ? ['"1.0.0"', '""'] : ['"true"', '"FALSE"', '"1.0.0"'];
    for (const value of [...strings, '["0.4.0","1.0.0"]', '["x"]', ...WRONG].filter(
      (v) => field !== 'cniVersion' || v !== '"s"',
    )) {
      const entries: Array<[string, string]> = [
        ['cniVersion', q('0.4.0')],
        ['name', q('net')],
        ['plugins', `[${obj(['type', q('bridge')])}]`],
      ];
      const at = entries.findIndex(([k]) => k === field);
      if (at >= 0) entries[at] = [field, value];
      else entries.push([field, value]);
      out.push({
        id: `conflist top ${field}=${value}`,
        files: { '10-case.conflist': obj(...entries), '99-fallback.conflist': FALLBACK },
      });
    }
  }
  return out;
}

/** Keys that differ only in case (or fold together in Go: ſ is s, K is k), in every order, and exact duplicates. */
function caseKeyCases(): DirCase[] {
  const out: DirCase[] = [];
  const spellings = ['type', 'TYPE', 'Type', 'tYpE'];
  const values = ['"bridge"', '"ptp"', '"portmap"', 'null', '""'];
  for (const a of spellings) {
    for (const b of spellings) {
      for (const [i, [va, vb]] of [
        [values[0], values[1]],
        [values[1], values[3]],
        [values[3], values[2]],
        [values[4], values[0]],
        [values[0], values[4]],
      ].entries()) {
        out.push(...asBoth(`keys ${a},${b} #${i}`, obj([a, va], [b, vb], ['name', q('n')])));
      }
    }
  }
  for (const [a, b] of [
    ['name', 'NAME'],
    ['NAME', 'name'],
    ['Name', 'name'],
    ['cniVersion', 'CNIVERSION'],
    ['CniVersion', 'cniVersion'],
  ]) {
    out.push(...asBoth(`keys ${a},${b} in a plugin`, obj(['type', q('bridge')], [a, q('0.3.1')], [b, q('0.4.0')])));
    out.push({
      id: `conflist top keys ${a},${b}`,
      files: {
        '10-case.conflist': obj([a, q('0.3.1')], [b, q('0.4.0')], ['plugins', `[${obj(['type', q('ptp')])}]`]),
        '99-fallback.conflist': FALLBACK,
      },
    });
  }
  const chainA = `[${obj(['type', q('bridge')])},${obj(['type', q('istio-cni')])}]`;
  const chainB = `[${obj(['type', q('ptp')])}]`;
  for (const [a, b] of [
    ['plugins', 'Plugins'],
    ['Plugins', 'plugins'],
    ['PLUGINS', 'Plugins'],
    ['plugins', 'plugins'],
  ]) {
    out.push({
      id: `conflist top keys ${a},${b}`,
      files: { '10-case.conflist': obj(['name', q('n')], [a, chainA], [b, chainB]), '99-fallback.conflist': FALLBACK },
    });
  }
  out.push({
    id: 'conflist duplicate name',
    files: {
      '10-case.conflist': obj(['name', q('a')], ['name', q('b')], ['plugins', chainA]),
      '99-fallback.conflist': FALLBACK,
    },
  });
  out.push({
    id: 'conflist duplicate name, last null',
    files: {
      '10-case.conflist': obj(['name', q('a')], ['name', 'null'], ['plugins', chainA]),
      '99-fallback.conflist': FALLBACK,
    },
  });
  // Go folds U+017F (ſ) to s and U+212A (Kelvin) to k when matching struct fields.
  for (const [k, v] of [
    ['cniVer\u017Fion', '"0.3.1"'],
    ['dn\u017F', '5'],
    ['dn\u017F', '{"\u017Fearch":1}'],
    ['capabilitie\u017F', '"x"'],
    ['\u212Aey', '1'],
    ['TY\u0420E', '1'],
    ['t\\u0079pe', '"ptp"'],
  ]) {
    out.push(...asBoth(`folded key ${k}`, `{"type":"bridge",${JSON.stringify(k).replace('\\\\u', '\\u')}:${v}}`));
  }
  return out;
}

const NUMBERS = [
  '1e400',
  '-1e400',
  '1e308',
  '1.7976931348623157e308',
  '1.7976931348623158e308',
  '1.7976931348623159e308',
  '1e-400',
  '123456789012345678901234567890',
  `1${'0'.repeat(400)}`,
  '-0',
  '0e0',
  '0.0000001',
  '1E+2',
];

function numberCases(): DirCase[] {
  const out: DirCase[] = [];
  for (const n of NUMBERS) {
    out.push(...asBoth(`number ${n} in an unknown plugin key`, obj(['type', q('bridge')], ['mtu', n])));
    out.push(
      ...asBoth(
        `number ${n} inside ipam`,
        obj(['type', q('bridge')], ['ipam', obj(['type', q('host-local')], ['x', `[${n}]`])]),
      ),
    );
    out.push(...asBoth(`number ${n} inside prevResult`, obj(['type', q('bridge')], ['prevResult', obj(['x', n])])));
    out.push({
      id: `conflist top number ${n}`,
      files: {
        '10-case.conflist': obj(['name', q('n')], ['x', n], ['plugins', `[${obj(['type', q('bridge')])}]`]),
        '99-fallback.conflist': FALLBACK,
      },
    });
  }
  return out;
}

/** Nesting around Go's limit of 10000 open arrays/objects, in ignored and in known fields. */
function depthCases(): DirCase[] {
  const out: DirCase[] = [];
  const arrays = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const objects = (n: number) => `${'{"a":'.repeat(n - 1)}{}${'}'.repeat(n - 1)}`;
  for (const total of [9999, 10000, 10001, 10002, 100000]) {
    // .conf: the plugin object is level 1; conflist: object → plugins array → plugin object.
    out.push({
      id: `depth ${total} arrays in an unknown key [.conf]`,
      files: { '10-case.conf': obj(['type', q('bridge')], ['x', arrays(total - 1)]), '99-fallback.conflist': FALLBACK },
    });
    out.push({
      id: `depth ${total} arrays in an unknown key [.conflist]`,
      files: {
        '10-case.conflist': list(obj(['type', q('bridge')], ['x', arrays(total - 3)])),
        '99-fallback.conflist': FALLBACK,
      },
    });
    out.push({
      id: `depth ${total} objects in prevResult [.conf]`,
      files: {
        '10-case.conf': obj(['type', q('bridge')], ['prevResult', objects(total - 1)]),
        '99-fallback.conflist': FALLBACK,
      },
    });
    out.push({
      id: `depth ${total} objects in ipam [.conflist]`,
      files: {
        '10-case.conflist': list(obj(['type', q('bridge')], ['ipam', objects(total - 3)])),
        '99-fallback.conflist': FALLBACK,
      },
    });
    out.push({
      id: `depth ${total} in capabilities [.conflist]`,
      files: {
        '10-case.conflist': list(obj(['type', q('bridge')], ['capabilities', obj(['a', arrays(total - 4)])])),
        '99-fallback.conflist': FALLBACK,
      },
    });
    out.push({
      id: `depth ${total} at the conflist top`,
      files: {
        '10-case.conflist': obj(
          ['name', q('n')],
          ['x', arrays(total - 1)],
          ['plugins', `[${obj(['type', q('bridge')])}]`],
        ),
        '99-fallback.conflist': FALLBACK,
      },
    });
  }
  return out;
}

/** Bytes Go's decoder treats specially: invalid UTF-8, surrogates, BOM, garbage, empty files, other tops. */
function byteCases(): DirCase[] {
  const raw = (...parts: Array<string | number[]>) =>
    Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
  const out: DirCase[] = [];
  const invalid: Array<[string, number[]]> = [
    ['ff', [0xff]],
    ['truncated e282', [0xe2, 0x82]],
    ['surrogate eda080', [0xed, 0xa0, 0x80]],
    ['overlong c0af', [0xc0, 0xaf]],
    ['f4908080', [0xf4, 0x90, 0x80, 0x80]],
    ['truncated f09f98', [0xf0, 0x9f, 0x98]],
  ];
  for (const [name, bytes] of invalid) {
    out.push(...asBoth(`invalid UTF-8 ${name} in type`, raw('{"type":"br', bytes, 'idge","name":"n"}')));
    out.push(...asBoth(`invalid UTF-8 ${name} in name`, raw('{"type":"bridge","name":"n', bytes, '"}')));
    out.push(...asBoth(`invalid UTF-8 ${name} in a key`, raw('{"type":"bridge","ty', bytes, 'pe":"ptp"}')));
    out.push(...asBoth(`invalid UTF-8 ${name} outside strings`, raw('{"type":"bridge"}', bytes)));
  }
  for (const esc of ['\\ud800', '\\udc00', '\\ud83d\\ude00', '\\ud800\\u0041', '\\u0000', '\\u00e9']) {
    out.push(...asBoth(`escape ${esc} in name`, `{"type":"bridge","name":"n${esc}"}`));
  }
  for (const [name, text] of [
    ['BOM', '\uFEFF{"type":"bridge"}'],
    ['trailing garbage', '{"type":"bridge"} x'],
    ['two documents', '{"type":"bridge"}{}'],
    ['trailing whitespace', '{"type":"bridge"} \n\t\r'],
    ['leading whitespace', '\n {"type":"bridge"}'],
    ['form feed', '\f{"type":"bridge"}'],
    ['empty', ''],
    ['only whitespace', ' \n'],
    ['top null', 'null'],
    ['top array', '[]'],
    ['top string', '"x"'],
    ['top number', '1'],
    ['top true', 'true'],
    ['trailing comma', '{"type":"bridge",}'],
    ['single quotes', "{'type':'bridge'}"],
    ['unquoted placeholder', '{"type":"bridge","mtu":__CNI_MTU__}'],
    ['control char in string', '{"type":"bri\u0001dge"}'],
    ['bad escape', '{"type":"br\\xidge"}'],
    ['comment', '{"type":"bridge"} // c'],
    ['NaN', '{"type":"bridge","x":NaN}'],
    ['leading zero', '{"type":"bridge","x":01}'],
    ['plus sign', '{"type":"bridge","x":+1}'],
    ['unterminated', '{"type":"bridge"'],
  ] as const) {
    out.push(...asBoth(name, text));
  }
  return out;
}

function shapeCases(): DirCase[] {
  const bridge = obj(['type', q('bridge')]);
  const shapes: Array<[string, string]> = [
    ['conflist as .conf', list(bridge, obj(['type', q('istio-cni')]))],
    ['no plugins key', obj(['name', q('n')])],
    ['empty plugins', obj(['name', q('n')], ['plugins', '[]'])],
    ['plugins null', obj(['name', q('n')], ['plugins', 'null'])],
    ['plugin null', list('null')],
    ['plugin array', list('[]')],
    ['plugin string', list('"bridge"')],
    ['plugin without type', list(bridge, obj(['name', q('x')]))],
    ['plugin type empty', list(obj(['type', q('')]))],
    ['no name', obj(['plugins', `[${bridge}]`])],
    ['empty name', obj(['name', q('')], ['plugins', `[${bridge}]`])],
    ['no cniVersion', obj(['name', q('n')], ['plugins', `[${bridge}]`])],
    ['plugin type with a slash', list(obj(['type', q('../bin/bridge')]))],
    [
      'many plugins',
      list(...Array.from({ length: 50 }, (_, i) => obj(['type', q(STANDARD_PLUGINS[i % STANDARD_PLUGINS.length])]))),
    ],
  ];
  return shapes.flatMap(([id, text]) => asBoth(id, text));
}

/** Random plugins and lists built from the same ingredients: spellings, duplicates, wrong kinds, odd numbers. */
function randomCases(seed: number, count: number): DirCase[] {
  // Seeded, so the random documents are the same on every run.
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const typeKeys = ['type', 'type', 'type', 'TYPE', 'Type'];
  const typeValues = ['"bridge"', '"ptp"', '"istio-cni"', '"portmap"', '"missing-plugin"', 'null', '""', '1'];
  const extras: Array<() => [string, string]> = [
    () => [pick(['name', 'NAME', 'Name']), pick(['"a"', '"b"', 'null', '2'])],
    () => [pick(['cniVersion', 'CNIVersion']), pick(['"0.4.0"', '"1.0.0"', 'null', '[]'])],
    () => [pick(['capabilities', 'Capabilities']), pick(['{"portMappings":true}', '{"x":"y"}', '{"a":null}', '[]'])],
    () => [
      pick(['ipam', 'IPAM']),
      pick(['{"type":"host-local"}', '{"TYPE":"x","type":2}', '{"ranges":[[1e400]]}', '"x"']),
    ],
    () => [
      pick(['dns', 'DNS']),
      pick(['{"nameservers":["1.1.1.1"]}', '{"nameservers":[1]}', '{"domain":"d","Domain":null}', '{}']),
    ],
    () => [
      pick(['mtu', 'x', 'kubernetes']),
      pick(['1500', '1e400', '{"kubeconfig":"__KUBECONFIG__"}', '[[[]]]', 'true']),
    ],
  ];
  const plugin = () => {
    const entries: Array<[string, string]> = [];
    const n = 1 + Math.floor(rnd() * 3);
    for (let i = 0; i < n; i++) entries.push([pick(typeKeys), pick(typeValues)]);
    for (let i = Math.floor(rnd() * 4); i > 0; i--) entries.push(pick(extras)());
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [entries[i], entries[j]] = [entries[j], entries[i]];
    }
    return obj(...entries);
  };
  const out: DirCase[] = [];
  for (let i = 0; i < count; i++) {
    out.push({
      id: `random ${seed}/${i} [.conf]`,
      files: { '10-case.conf': plugin(), '99-fallback.conflist': FALLBACK },
    });
    const top: Array<[string, string]> = [
      [pick(['name', 'name', 'NAME']), pick(['"n"', '""', 'null'])],
      ['plugins', `[${Array.from({ length: 1 + Math.floor(rnd() * 3) }, plugin).join(',')}]`],
    ];
    if (rnd() < 0.3)
      top.push(
        pick<[string, string]>([
          ['disableCheck', pick(['true', '"true"', '1'])],
          ['cniVersion', pick(['"0.4.0"', '1', 'null'])],
        ]),
      );
    out.push({
      id: `random ${seed}/${i} [.conflist]`,
      files: { '10-case.conflist': obj(...top), '99-fallback.conflist': FALLBACK },
    });
  }
  return out;
}

/** Every file of the shared corpus, as a conflist and as a conf. */
function corpusCases(): DirCase[] {
  return readdirSync(CORPUS_DIR)
    .filter((f) => f !== 'SOURCES.tsv')
    .sort()
    .flatMap((f) => asBoth(`corpus ${f}`, readFileSync(join(CORPUS_DIR, f))));
}

export function fileCases(): DirCase[] {
  return [
    ...corpusCases(),
    ...fieldTypeCases(),
    ...caseKeyCases(),
    ...numberCases(),
    ...depthCases(),
    ...byteCases(),
    ...shapeCases(),
    ...randomCases(20250611, 150),
  ];
}
