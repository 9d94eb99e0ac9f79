/**
 * The pure parts of following Multus (src/cni/multus.ts): path aliases, Go's struct decoding of Multus' NetConf
 * (keys matched case-insensitively, the last one in re-marshalled order winning), and json.Marshal of a decoded value.
 */
import { describe, expect, it } from 'vitest';
import { decodeJson, JsonObject } from '../../src/cni/gojson.ts';
import { hostPath, readMultusConf } from '../../src/cni/multus.ts';
import { marshalGo } from '../../src/cni/netconf.ts';

const plugin = (text: string) => {
  const doc = decodeJson(Buffer.from(text));
  if (!doc.ok || !(doc.value instanceof JsonObject)) throw new Error(text);
  return { type: 'multus', raw: doc.value };
};

describe('hostPath: Multus’ paths on the host', () => {
  const paths = [
    { from: '/host/etc/cni/net.d', to: '/etc/kubernetes/cni/net.d' },
    { from: '/host/run/multus/cni/net.d', to: '/run/multus/cni/net.d' },
    { from: '/host', to: '/' },
  ];
  it.each([
    ['/host/etc/cni/net.d/10-calico.conflist', '/etc/kubernetes/cni/net.d/10-calico.conflist'],
    ['/host/run/multus/cni/net.d/10-ovn-kubernetes.conf', '/run/multus/cni/net.d/10-ovn-kubernetes.conf'],
    ['/host/var/lib/x.conf', '/var/lib/x.conf'], // the longest matching alias wins
    ['/host/etc/cni/net.d', '/etc/kubernetes/cni/net.d'],
    ['/hostile/x.conf', '/hostile/x.conf'], // a prefix only at a path boundary
    ['/etc/cni/net.d//./a/../10.conf', '/etc/cni/net.d/10.conf'],
    ['/host/etc/cni/net.d/../../../etc/shadow', '/etc/shadow'], // cleaned before matching, as Go's filepath.Clean
  ])('%s → %s', (path, want) => {
    expect(hostPath(path, { paths })).toBe(want);
  });
});

describe('readMultusConf: Go decoding into multus NetConf', () => {
  it.each([
    ['{"clusterNetwork":"a"}', { clusterNetwork: 'a' }],
    ['{"ClusterNetwork":"a","clusterNetwork":"b"}', { clusterNetwork: 'b' }], // sorted: "C…" < "c…", the last wins
    ['{"clusterNetwork":"b","CLUSTERNETWORK":"a"}', { clusterNetwork: 'b' }],
    ['{"clusterNetwork":"a","confdir":"/x"}', { clusterNetwork: 'a', confDir: '/x' }],
    ['{"clusterNetwork":"a","confDir":null}', { clusterNetwork: 'a', confDir: '/etc/cni/multus/net.d' }],
    ['{"delegates":[{"type":"x"}]}', { clusterNetwork: '', delegates: [expect.any(JsonObject)] }],
  ])('%s', (text, want) => {
    expect(readMultusConf(plugin(text))).toMatchObject(want);
  });

  it.each([
    ['{"clusterNetwork":1}', 'LoadNetConf: clusterNetwork is not a string'],
    ['{"delegates":{}}', 'LoadNetConf: delegates is not a list of objects'],
    ['{"delegates":[1]}', 'LoadNetConf: delegates is not a list of objects'],
    ['{"clusterNetwork":""}', 'LoadNetConf: at least one delegate/clusterNetwork must be specified'],
  ])('%s is refused', (text, error) => {
    expect(readMultusConf(plugin(text))).toBe(error);
  });
});

describe('marshalGo: json.Marshal of a value decoded into interface{}', () => {
  it.each([
    ['{"b":1,"a":[true,null,"x"],"b":2}', '{"a":[true,null,"x"],"b":2}'],
    ['{"z":{"y":1,"x":{"w":[{}]}}}', '{"z":{"x":{"w":[{}]},"y":1}}'],
    ['[]', '[]'],
    ['"\\u00e9"', '"é"'],
  ])('%s → %s', (text, want) => {
    const doc = decodeJson(Buffer.from(text));
    if (!doc.ok) throw new Error(doc.error);
    expect(marshalGo(doc.value)).toBe(want);
  });

  it('costs no stack on a document nested 10000 deep', () => {
    const deep = `${'['.repeat(9999)}${']'.repeat(9999)}`;
    const doc = decodeJson(Buffer.from(deep));
    if (!doc.ok) throw new Error(doc.error);
    expect(marshalGo(doc.value)).toBe(deep);
  });
});
