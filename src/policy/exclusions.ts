/**
 * What a pod may leave out of redirection. Meshes let pods exempt destinations and ports (annotations, init
 * arguments), and the pod author writes them: unchecked, `0.0.0.0/0,::/0` — or 256 /8s, or `1-65535` — un-meshes
 * the pod while every container looks right. The rule (configurable under `exclusions`):
 * - outbound CIDRs may together cover at most 2^-N of their family (default N=8: one /8 of IPv4, one /8 of IPv6),
 *   however they are split, and never the validator's probe address (the validator would then prove a path the
 *   app's traffic does not take);
 * - at most `maxOutboundPorts` outbound and `maxInboundPorts` inbound ports, and never the probe's port;
 * - nothing may narrow or switch off the redirect itself (include-lists other than "*", excluded interfaces,
 *   interception mode NONE, another exempt UID): those are refused outright (RedirectSettings.narrowing).
 * A list longer than util/values.ts MAX_LIST_ENTRIES is refused as too large before any of this (`too_large`).
 */
import type { Compiled } from '../config/compile.ts';
import type { RedirectSettings } from '../mesh/types.ts';
import { coversPort, MAX_LIST_ENTRIES, portCount } from '../util/values.ts';
import { block, contains, coverage, type Block } from './cidr.ts';

export interface ExclusionVerdict {
  reason: 'too_large' | 'invalid_annotation' | 'redirect_narrowed' | 'exclusion_refused';
  message: string;
}

/**
 * Verdicts on settings that are shared, read-only, between reviews — frozen: the verdict cache hands the same init
 * container's settings to every pod it sees again (src/policy/verdict-cache.ts) — by identity, per configuration and
 * source: the same exclusions are weighed once.
 */
const onShared = new WeakMap<
  RedirectSettings,
  { cfg: Compiled; source: string; verdict: ExclusionVerdict | undefined }
>();

export function judgeSettings(s: RedirectSettings, cfg: Compiled, source: string): ExclusionVerdict | undefined {
  if (!Object.isFrozen(s)) return weigh(s, cfg, source);
  const hit = onShared.get(s);
  if (hit && hit.cfg === cfg && hit.source === source) return hit.verdict;
  const verdict = weigh(s, cfg, source);
  onShared.set(s, { cfg, source, verdict: verdict && Object.freeze(verdict) });
  return verdict;
}

function weigh(s: RedirectSettings, cfg: Compiled, source: string): ExclusionVerdict | undefined {
  if (s.tooLarge.length) return { reason: 'too_large', message: s.tooLarge.join('; ') };
  if (s.invalid.length) return { reason: 'invalid_annotation', message: s.invalid.join('; ') };
  if (s.narrowing.length) return { reason: 'redirect_narrowed', message: s.narrowing.join('; ') };
  // Nothing excluded, nothing to weigh (most pods): every bound below holds for empty lists.
  if (s.outboundCidrs.length + s.outboundPorts.length + s.inboundPorts.length === 0) return undefined;
  const e = cfg.config.exclusions;
  // Each list was bounded as it was read; a source that gave several lists for one kind is bounded here, before
  // any arithmetic.
  const tooMany: string[] = [];
  for (const [what, n] of [
    ['outbound CIDRs', s.outboundCidrs.length],
    ['outbound port ranges', s.outboundPorts.length],
    ['inbound port ranges', s.inboundPorts.length],
  ] as const) {
    if (n > MAX_LIST_ENTRIES) tooMany.push(`${n} ${what} (meshgate judges at most ${MAX_LIST_ENTRIES})`);
  }
  if (tooMany.length) return { reason: 'too_large', message: `${source}: ${tooMany.join('; ')}` };
  const problems: string[] = [];
  const blocks = s.outboundCidrs.map(block).filter((b): b is Block => b !== undefined);
  for (const family of [4, 6] as const) {
    const bits = family === 4 ? 32n : 128n;
    const limit = 1n << (bits - BigInt(e.outboundCidrCoverage));
    const covered = coverage(blocks, family);
    if (covered > limit) {
      const share = covered === 1n << bits ? 'all' : `2^${covered.toString(2).length - 1}+ addresses`;
      problems.push(
        `the excluded IPv${family} destinations cover ${share} of IPv${family}; ` +
          `at most one /${e.outboundCidrCoverage} worth may be excluded (exclusions.outboundCidrCoverage)`,
      );
    }
  }
  const probe = blocks.find((b) => contains(b, cfg.probe.host));
  if (probe)
    problems.push(
      `an excluded range contains the validator's probe address ${cfg.probe.host}, so the check would not cover it`,
    );
  const out = portCount(s.outboundPorts);
  if (out > e.maxOutboundPorts)
    problems.push(
      `${out} outbound ports are excluded; at most ${e.maxOutboundPorts} may be (exclusions.maxOutboundPorts)`,
    );
  if (coversPort(s.outboundPorts, cfg.probe.port))
    problems.push(`the excluded outbound ports include the validator's probe port ${cfg.probe.port}`);
  const inbound = portCount(s.inboundPorts);
  if (inbound > e.maxInboundPorts)
    problems.push(
      `${inbound} inbound ports are excluded; at most ${e.maxInboundPorts} may be (exclusions.maxInboundPorts)`,
    );
  return problems.length ? { reason: 'exclusion_refused', message: `${source}: ${problems.join('; ')}` } : undefined;
}
