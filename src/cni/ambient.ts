/**
 * Istio ambient on top of the chain verdict (issue 26): a verified istio-cni chain redirects ambient pods only when
 * the plugin has `ambient_enabled: true` (istio cni/pkg/plugin/plugin.go reads it from its stdin config), istio-cni's
 * node agent is ready to program them, and a ztunnel is connected to that agent's ZDS socket to proxy them. The first
 * is read from the files; the other two are facts the node agent gathers (src/agent/ambient-facts.ts). Pure.
 */
import type { JsonValue } from './gojson.ts';
import { goFold } from './netconf.ts';
import type { Snapshot, ChainVerdict, VerifyOptions } from './types.ts';
import { chainOf, verdictMessage } from './verify.ts';

/** What the node agent saw of ambient's node components; each `detail` says what was checked. */
export interface AmbientFacts {
  readonly agent: { readonly ready: boolean; readonly detail: string };
  readonly ztunnel: { readonly connected: boolean; readonly detail: string };
}

export interface AmbientEvidence {
  /** The istio-cni plugin's ambient_enabled as it reads it (undefined: absent or not a bool: false). */
  readonly ambientEnabled: boolean;
  readonly agent: string;
  readonly ztunnel: string;
}

const AMBIENT_ENABLED = goFold('ambient_enabled');

/**
 * The plugin's `ambient_enabled` as Go's json.Unmarshal reads it into istio-cni's Config: keys match
 * case-insensitively and the last one in libcni's re-marshalled order (sorted by bytes) wins; only a bool is read.
 */
export function ambientEnabled(entries: ReadonlyArray<[string, JsonValue]>): boolean {
  const matching = [...new Map(entries)]
    .filter(([k]) => goFold(k) === AMBIENT_ENABLED)
    .sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  const value = matching.at(-1)?.[1];
  return value === true;
}

export function withAmbient(
  verdict: ChainVerdict,
  snapshot: Snapshot,
  options: VerifyOptions,
  facts: AmbientFacts,
): ChainVerdict {
  const chain = chainOf(snapshot, options);
  const mesh = chain.ok ? chain.plugins.filter((p) => p.type === options.pluginType) : [];
  const enabled = mesh.length > 0 && mesh.every((p) => ambientEnabled(p.raw.entries));
  const ambient: AmbientEvidence = {
    ambientEnabled: enabled,
    agent: facts.agent.detail,
    ztunnel: facts.ztunnel.detail,
  };
  const evidence = { ...verdict.evidence, ambient };
  if (!verdict.verified) return { ...verdict, evidence };
  const fail = (reason: 'ambient_disabled' | 'ambient_agent_not_ready' | 'ztunnel_not_ready', detail: string) => ({
    verified: false,
    reason,
    message: verdictMessage(reason, verdict.evidence.file, detail),
    detail,
    evidence,
  });
  if (!enabled) return fail('ambient_disabled', `${options.pluginType} has no "ambient_enabled": true`);
  if (!facts.agent.ready) return fail('ambient_agent_not_ready', facts.agent.detail);
  if (!facts.ztunnel.connected) return fail('ztunnel_not_ready', facts.ztunnel.detail);
  return { ...verdict, evidence };
}
