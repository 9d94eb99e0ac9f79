/**
 * The mesh plugin's own configuration, compared with the mesh profile meshgate guards. Being in the chain is not
 * enough: linkerd-cni redirects to the ports and exempts the UID written in its `linkerd` block, so a plugin set up
 * for other ports (another mesh's, or a proxy-init upgrade's) would send every pod's traffic where no proxy listens
 * — or exempt another UID — while the node looks verified. Istio's istio-cni has no such block (its ports come from
 * the pod), so only linkerd-cni is read.
 *
 * Read the way linkerd-cni reads its stdin (linkerd2-proxy-init cni-plugin `parseConfig`: json.Unmarshal into
 * PluginConf{ProxyInit `json:"linkerd"`}), after libcni re-marshalled the plugin (src/cni/parse.ts): one key per
 * exact name, the last duplicate, sorted by bytes; keys match fields case-insensitively; every matching key is
 * applied in that order (a second "LINKERD" object merges into the first); null leaves a field as it was; an `int`
 * takes only a whole number that fits int64 (after the float64 round trip), a `bool` only true/false. A value of
 * the wrong type makes linkerd-cni fail every ADD, which is reported too.
 */
import { JsonNumber, JsonObject, type JsonValue } from './gojson.ts';
import { goFold } from './netconf.ts';
import type { Snapshot, ChainVerdict, VerifyOptions } from './types.ts';
import { chainOf, verdictMessage, verifyChain } from './verify.ts';

/** What the mesh profile says the redirect must look like. */
export interface RedirectExpectations {
  inboundPort: number;
  outboundPort: number;
  proxyUid: number;
}

export interface LinkerdCniSettings {
  incomingProxyPort: number;
  outgoingProxyPort: number;
  proxyUid: number;
  simulate: boolean;
  portsToRedirect: number[];
}

type Kind = 'int' | 'bool' | 'string' | 'intList' | 'stringList';

/** ProxyInit's fields (cni-plugin/main.go), by Go-folded JSON name. */
const PROXY_INIT: Record<string, { field: string; kind: Kind }> = Object.fromEntries(
  (
    [
      ['incoming-proxy-port', 'int'],
      ['outgoing-proxy-port', 'int'],
      ['proxy-uid', 'int'],
      ['proxy-gid', 'int'],
      ['ports-to-redirect', 'intList'],
      ['inbound-ports-to-ignore', 'stringList'],
      ['outbound-ports-to-ignore', 'stringList'],
      ['subnets-to-ignore', 'stringList'],
      ['simulate', 'bool'],
      ['use-wait-flag', 'bool'],
      ['iptables-mode', 'string'],
      ['ipv6', 'bool'],
    ] as const
  ).map(([field, kind]) => [goFold(field), { field, kind }]),
);

/** The keys as json.Marshal of a Go map writes them: last value per exact key, sorted by UTF-8 bytes. */
function remarshalled(obj: JsonObject): Array<[string, JsonValue]> {
  return [...new Map(obj.entries)].sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

/** Largest magnitude strconv.ParseInt(…, 64) takes: the re-marshalled float64 must be a whole number this small. */
const INT64_MAX = 2 ** 63;

function asInt(v: JsonValue): number | undefined {
  if (!(v instanceof JsonNumber)) return undefined;
  const n = Number(v.text);
  return Number.isInteger(n) && Math.abs(n) < INT64_MAX ? n : undefined;
}

function typed(v: JsonValue, kind: Kind): unknown {
  switch (kind) {
    case 'int':
      return asInt(v);
    case 'bool':
      return typeof v === 'boolean' ? v : undefined;
    case 'string':
      return typeof v === 'string' ? v : undefined;
    case 'intList': {
      if (!Array.isArray(v)) return undefined;
      const out = v.map((x) => (x === null ? 0 : asInt(x)));
      return out.every((x) => x !== undefined) ? out : undefined;
    }
    case 'stringList': {
      if (!Array.isArray(v)) return undefined;
      return v.every((x) => x === null || typeof x === 'string') ? v.map((x) => x ?? '') : undefined;
    }
  }
}

/** linkerd-cni's view of one plugin entry of the chain, or the error with which it would fail every ADD. */
export function readLinkerdCni(
  plugin: JsonObject,
): { ok: true; value: LinkerdCniSettings } | { ok: false; error: string } {
  const values: Record<string, unknown> = {};
  for (const [key, block] of remarshalled(plugin)) {
    if (goFold(key) !== 'LINKERD' || block === null) continue;
    if (!(block instanceof JsonObject)) return { ok: false, error: `"${key}" is not an object` };
    for (const [name, v] of remarshalled(block)) {
      const f = PROXY_INIT[goFold(name)];
      if (!f || v === null) continue;
      const value = typed(v, f.kind);
      if (value === undefined) {
        const goType = f.kind === 'intList' ? '[]int' : f.kind === 'stringList' ? '[]string' : f.kind;
        return { ok: false, error: `${key}.${name} cannot be read as Go type ${goType}` };
      }
      values[f.field] = value;
    }
  }
  return {
    ok: true,
    value: {
      incomingProxyPort: (values['incoming-proxy-port'] as number) ?? 0,
      outgoingProxyPort: (values['outgoing-proxy-port'] as number) ?? 0,
      proxyUid: (values['proxy-uid'] as number) ?? 0,
      simulate: (values.simulate as boolean) ?? false,
      portsToRedirect: (values['ports-to-redirect'] as number[]) ?? [],
    },
  };
}

/** Each way the plugin's settings differ from the profile, as a phrase; empty when they agree. */
export function linkerdCniMismatches(s: LinkerdCniSettings, want: RedirectExpectations): string[] {
  const out: string[] = [];
  if (s.incomingProxyPort !== want.inboundPort)
    out.push(`incoming-proxy-port is ${s.incomingProxyPort}, the proxy's inbound port is ${want.inboundPort}`);
  if (s.outgoingProxyPort !== want.outboundPort)
    out.push(`outgoing-proxy-port is ${s.outgoingProxyPort}, the proxy's outbound port is ${want.outboundPort}`);
  if (s.proxyUid !== want.proxyUid) out.push(`proxy-uid is ${s.proxyUid}, the proxy runs as ${want.proxyUid}`);
  if (s.simulate) out.push('simulate is true: it installs no rules');
  if (s.portsToRedirect.length > 0)
    out.push(`ports-to-redirect ${s.portsToRedirect.join(',')} narrows inbound redirection to those ports`);
  return out;
}

/**
 * The chain verdict (src/cni/verify.ts), then — for a verified linkerd-cni chain and a known profile — the plugin's
 * own settings: a mismatch makes the node unverified with reason `plugin_config_mismatch`.
 */
export function verifyWithPluginConfig(
  snapshot: Snapshot,
  options: VerifyOptions,
  expect?: RedirectExpectations,
): ChainVerdict {
  const verdict = verifyChain(snapshot, options);
  if (!verdict.verified || !expect || options.pluginType !== 'linkerd-cni') return verdict;
  const chain = chainOf(snapshot, options);
  if (!chain.ok) return verdict;
  const problems = chain.plugins
    .filter((p) => p.type === options.pluginType)
    .flatMap((p) => {
      const read = readLinkerdCni(p.raw);
      return read.ok
        ? linkerdCniMismatches(read.value, expect)
        : [`linkerd-cni cannot read its configuration (${read.error}) and fails every pod`];
    });
  if (problems.length === 0) return verdict;
  const detail = `${options.pluginType}: ${problems.join('; ')}`;
  return {
    verified: false,
    reason: 'plugin_config_mismatch',
    message: verdictMessage('plugin_config_mismatch', verdict.evidence.file, detail),
    detail,
    evidence: verdict.evidence,
  };
}
