/** libcni's parsing rules, as emulated by src/cni/parse.ts: what loads and what is an error. */
import { describe, expect, it } from 'vitest';
import { parseNetworkFile } from '../../src/cni/parse.ts';
import { LIBCNI_LINES, type LibcniLine, type PluginDir } from '../../src/cni/types.ts';

const list = (extra: object) =>
  JSON.stringify({ name: 'n', cniVersion: '1.0.0', plugins: [{ type: 'bridge' }], ...extra });

// prettier-ignore
const CASES: Array<{ name: string; file: string; content: string; types?: string[]; error?: RegExp }> = [
  { name: 'conflist', file: 'a.conflist', content: list({}), types: ['bridge'] },
  {
    name: 'conflist without cniVersion',
    file: 'a.conflist',
    content: JSON.stringify({ name: 'n', plugins: [{ type: 'x' }] }),
    types: ['x'],
  },
  { name: 'conflist with empty name', file: 'a.conflist', content: list({ name: '' }), types: ['bridge'] },
  {
    name: 'conflist without name',
    file: 'a.conflist',
    content: JSON.stringify({ plugins: [{ type: 'x' }] }),
    error: /no name/,
  },
  {
    name: 'conflist name not a string',
    file: 'a.conflist',
    content: list({ name: 7 }),
    error: /invalid name type float64/,
  },
  { name: 'conflist name null', file: 'a.conflist', content: list({ name: null }), error: /invalid name type <nil>/ },
  {
    name: 'conflist keys are case-sensitive (map)',
    file: 'a.conflist',
    content: JSON.stringify({ Name: 'n', plugins: [{ type: 'x' }] }),
    error: /no name/,
  },
  { name: 'cniVersion not a string', file: 'a.conflist', content: list({ cniVersion: 1 }), error: /cniVersion/ },
  // libcni v1.1.1 does not read cniVersions (v1.2+ does) and wants a JSON bool for disableCheck (v1.2+ takes "true").
  {
    name: 'cniVersions not strings (ignored by v1.1.1)',
    file: 'a.conflist',
    content: list({ cniVersions: [1] }),
    types: ['bridge'],
  },
  {
    name: 'disableCheck as "TRUE" string',
    file: 'a.conflist',
    content: list({ disableCheck: 'TRUE' }),
    error: /invalid disableCheck type string/,
  },
  { name: 'disableCheck as a bool', file: 'a.conflist', content: list({ disableCheck: true }), types: ['bridge'] },
  { name: 'plugins missing', file: 'a.conflist', content: JSON.stringify({ name: 'n' }), error: /no 'plugins' key/ },
  { name: 'plugins empty', file: 'a.conflist', content: list({ plugins: [] }), error: /no plugins in list/ },
  { name: 'plugins null', file: 'a.conflist', content: list({ plugins: null }), error: /invalid 'plugins' type/ },
  {
    name: 'plugins an object',
    file: 'a.conflist',
    content: list({ plugins: { type: 'x' } }),
    error: /invalid 'plugins' type/,
  },
  {
    name: 'plugin without type',
    file: 'a.conflist',
    content: list({ plugins: [{ type: 'a' }, { name: 'b' }] }),
    error: /plugin config 1: .*missing 'type'/,
  },
  { name: 'plugin null', file: 'a.conflist', content: list({ plugins: [null] }), error: /missing 'type'/ },
  { name: 'plugin a number', file: 'a.conflist', content: list({ plugins: [1] }), error: /cannot unmarshal number/ },
  {
    name: 'plugin type not a string',
    file: 'a.conflist',
    content: list({ plugins: [{ type: 1 }] }),
    error: /cannot unmarshal number into Go value of type string \(Go struct field NetConf.type\)/,
  },
  {
    name: 'plugin type key matched case-insensitively',
    file: 'a.conflist',
    content: list({ plugins: [{ Type: 'calico' }, { TYPE: 'istio-cni' }] }),
    types: ['calico', 'istio-cni'],
  },
  // Each plugin is re-marshalled with sorted keys ("Type" < "type"), so the lower-case key is applied last.
  {
    name: 'keys differing in case: the re-marshalled order decides',
    file: 'a.conflist',
    content: list({ plugins: [{ type: 'a', Type: 'b' }] }),
    types: ['a'],
  },
  {
    name: '.conf: the first decode takes the last key, the re-marshalled list runs "type"',
    file: 'a.conf',
    content: '{"type":"a","TYPE":"b"}',
    types: ['a'],
  },
  {
    name: 'a key folding to "type" through U+017F (long s is s to Go)',
    file: 'a.conf',
    content: '{"na\u017fme":"x","type":"a","\u017fype":"b"}',
    types: ['a'],
  },
  {
    name: 'duplicate key with null: the map keeps null, the type is lost',
    file: 'a.conflist',
    content: list({ plugins: [JSON.parse('{"type":"a"}')] }).replace('"type":"a"', '"type":"a","type":null'),
    error: /missing 'type'/,
  },
  {
    name: 'capabilities with a string',
    file: 'a.conflist',
    content: list({ plugins: [{ type: 'p', capabilities: { portMappings: 'true' } }] }),
    error: /capabilities/,
  },
  {
    name: 'ipam not an object',
    file: 'a.conflist',
    content: list({ plugins: [{ type: 'p', ipam: 'host-local' }] }),
    error: /types.IPAM/,
  },
  {
    name: 'dns.nameservers a string',
    file: 'a.conflist',
    content: list({ plugins: [{ type: 'p', dns: { nameservers: '1.1.1.1' } }] }),
    error: /DNS.nameservers/,
  },
  {
    name: 'null known fields are unset',
    file: 'a.conflist',
    content: list({ plugins: [{ type: 'p', ipam: null, dns: null, capabilities: null }] }),
    types: ['p'],
  },
  {
    name: 'unknown keys are ignored',
    file: 'a.conflist',
    content: list({ plugins: [{ type: 'p', NOTE: 1, delegates: [{}] }], extra: true }),
    types: ['p'],
  },
  { name: 'top-level null', file: 'a.conflist', content: 'null', error: /no name/ },
  { name: 'top-level string', file: 'a.conflist', content: '"x"', error: /cannot unmarshal string/ },
  {
    name: 'UTF-8 BOM (Go rejects it too)',
    file: 'a.conflist',
    content: `\uFEFF${list({})}`,
    error: /invalid character 'ï' looking for beginning of value/,
  },
  { name: 'trailing garbage', file: 'a.conflist', content: `${list({})} x`, error: /after top-level value/ },
  {
    name: 'unquoted placeholder',
    file: 'a.conflist',
    content: '{"name":"n","plugins":[{"type":"calico","mtu":__CNI_MTU__}]}',
    error: /invalid character '_' looking for beginning of value/,
  },
  {
    name: 'number beyond float64 (1e400)',
    file: 'a.conflist',
    // biome-ignore lint/correctness/noPrecisionLoss: the point: a number JSON allows and float64 cannot hold
    content: list({ mtu: 1e400 }).replace('null', '1e400'),
    error: /cannot unmarshal number 1e400/,
  },
  {
    name: "nesting beyond Go's 10000 levels",
    file: 'a.conflist',
    content: `{"name":"n","plugins":[{"type":"p","x":${'['.repeat(9998)}${']'.repeat(9998)}}]}`,
    error: /exceeded max depth/,
  },
  {
    name: "nesting at Go's limit (10000 levels)",
    file: 'a.conflist',
    content: `{"name":"n","plugins":[{"type":"p","x":${'['.repeat(9997)}${']'.repeat(9997)}}]}`,
    types: ['p'],
  },
  { name: '.conf single plugin', file: 'a.conf', content: JSON.stringify({ type: 'bridge' }), types: ['bridge'] },
  {
    name: '.json single plugin',
    file: 'a.json',
    content: JSON.stringify({ cniVersion: '0.3.1', name: 'x', type: 'ptp' }),
    types: ['ptp'],
  },
  { name: '.conf holding a conflist', file: 'a.conf', content: list({}), error: /missing 'type'/ },
  { name: '.conf with type null', file: 'a.conf', content: JSON.stringify({ type: null }), error: /missing 'type'/ },
  { name: '.conf top-level array', file: 'a.conf', content: '[]', error: /cannot unmarshal array/ },
  { name: '.conf empty file', file: 'a.conf', content: '', error: /unexpected end of JSON input/ },
];

describe('parseNetworkFile (libcni rules)', () => {
  it.each(CASES)('$name', ({ file, content, types, error }) => {
    const result = parseNetworkFile(file, content, { line: '1.1' });
    if (error) {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toMatch(error);
    } else {
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.network.plugins.map((p) => p.type)).toEqual(types);
    }
  });

  it('takes the network name and version of a .conf from the plugin itself', () => {
    const r = parseNetworkFile('x.conf', JSON.stringify({ cniVersion: '0.4.0', name: 'dbnet', type: 'bridge' }), {
      line: '1.1',
    });
    expect(r.ok && { name: r.network.name, v: r.network.cniVersion }).toEqual({ name: 'dbnet', v: '0.4.0' });
  });
});

describe('what each libcni line reads differently (src/cni/parse.ts)', () => {
  const mesh = [{ type: 'bridge' }];
  const conflist = (extra: object) => JSON.stringify({ cniVersion: '0.4.0', name: 'k8s', plugins: mesh, ...extra });
  const dirs: Record<string, PluginDir> = {
    k8s: { name: 'k8s', files: [{ name: '10-istio.conf', content: '{"type":"istio-cni"}' }] },
    broken: { name: 'broken', error: 'ENOTDIR: not a directory' },
    '../x': { name: '../x', outside: true },
  };
  const pluginDir = (name: string) => dirs[name];
  type Want = string[] | RegExp | 'undecidable';
  const CASES: Array<{ name: string; file?: string; text: string; want: Record<LibcniLine, Want> }> = [
    {
      name: 'disableCheck "true"',
      text: conflist({ disableCheck: 'true' }),
      want: {
        '1.1': /invalid disableCheck type string/,
        '1.2': ['bridge'],
        '1.3': ['bridge', 'istio-cni'],
      },
    },
    {
      name: 'disableCheck "yes"',
      text: conflist({ disableCheck: 'yes' }),
      want: {
        '1.1': /invalid disableCheck type/,
        '1.2': /invalid value "yes" for disableCheck/,
        '1.3': /invalid value/,
      },
    },
    {
      name: 'disableGC 1',
      text: conflist({ disableGC: 1 }),
      want: { '1.1': ['bridge'], '1.2': /invalid type float64 for disableGC/, '1.3': /disableGC/ },
    },
    {
      name: 'loadOnlyInlinedPlugins 1',
      text: conflist({ loadOnlyInlinedPlugins: 1 }),
      want: { '1.1': ['bridge'], '1.2': ['bridge'], '1.3': /invalid type float64 for loadOnlyInlinedPlugins/ },
    },
    {
      name: 'no plugins key, a plugin dir',
      text: JSON.stringify({ cniVersion: '1.0.0', name: 'k8s' }),
      want: { '1.1': /no 'plugins' key/, '1.2': /no 'plugins' key/, '1.3': ['istio-cni'] },
    },
    {
      name: 'no plugins key, no plugin dir',
      text: JSON.stringify({ cniVersion: '1.0.0', name: 'none' }),
      want: { '1.1': /no 'plugins' key/, '1.2': /no 'plugins' key/, '1.3': /no plugin configs found/ },
    },
    {
      name: 'loadOnlyInlinedPlugins "TRUE" without plugins',
      text: JSON.stringify({ name: 'k8s', loadOnlyInlinedPlugins: 'TRUE' }),
      want: { '1.1': /no 'plugins' key/, '1.2': /no 'plugins' key/, '1.3': /loadOnlyInlinedPlugins` is true/ },
    },
    {
      name: 'loadOnlyInlinedPlugins "TRUE" ignores the plugin dir',
      text: conflist({ loadOnlyInlinedPlugins: 'TRUE' }),
      want: { '1.1': ['bridge'], '1.2': ['bridge'], '1.3': ['bridge'] },
    },
    {
      name: 'plugins and a plugin dir',
      text: conflist({}),
      want: { '1.1': ['bridge'], '1.2': ['bridge'], '1.3': ['bridge', 'istio-cni'] },
    },
    {
      name: 'a plugin dir that cannot be listed',
      text: conflist({ name: 'broken' }),
      want: { '1.1': ['bridge'], '1.2': ['bridge'], '1.3': /failed to read plugin config files in broken: ENOTDIR/ },
    },
    {
      name: 'a plugin dir outside the conf dir',
      text: conflist({ name: '../x' }),
      want: { '1.1': ['bridge'], '1.2': ['bridge'], '1.3': 'undecidable' },
    },
    {
      name: 'valid-attachments not a list (conflist)',
      text: JSON.stringify({ name: 'n', plugins: [{ type: 'bridge', 'cni.dev/valid-attachments': 'x' }] }),
      want: { '1.1': ['bridge'], '1.2': /cannot unmarshal string/, '1.3': /cannot unmarshal string/ },
    },
    {
      name: 'valid-attachments with a number ifname (.conf)',
      file: 'a.conf',
      text: JSON.stringify({ type: 'bridge', 'CNI.DEV/Valid-Attachments': [{ ifname: 1 }] }),
      want: { '1.1': ['bridge'], '1.2': /cannot unmarshal number/, '1.3': /cannot unmarshal number/ },
    },
  ];

  it.each(CASES.flatMap((c) => LIBCNI_LINES.map((line) => ({ ...c, line }))))('$name, libcni $line', (c) => {
    const r = parseNetworkFile(c.file ?? 'a.conflist', c.text, { line: c.line, pluginDir });
    const want = c.want[c.line];
    if (Array.isArray(want)) {
      expect(r.ok && r.network.plugins.map((p) => p.type)).toEqual(want);
    } else if (want === 'undecidable') {
      expect(r).toMatchObject({ ok: false, undecidable: true });
    } else {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(want);
    }
  });

  it('cniVersions replaces cniVersion from libcni 1.2 on', () => {
    const text = JSON.stringify({ cniVersion: '0.4.0', cniVersions: ['1.0.0', '9.9.9'], name: 'n', plugins: mesh });
    const version = (line: LibcniLine) => {
      const r = parseNetworkFile('a.conflist', text, { line });
      return r.ok ? r.network.cniVersion : r.error;
    };
    expect(LIBCNI_LINES.map(version)).toEqual(['0.4.0', '1.0.0', '1.0.0']);
  });
});
