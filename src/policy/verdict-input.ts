/**
 * What one judgement of a mesh container reads (JudgementInput), the PodView a judgement of it gets (podViewOf), and
 * the input with the pod's own ServiceAccount token volume names replaced (renamed), so that the replicas of a
 * workload, each with its `kube-api-access-<random>`, are one input to the verdict cache (verdict-cache.ts, which keeps
 * inputs as verdict-snapshot.ts writes them).
 */
import type { Compiled } from '../config/compile.ts';
import type { Container, ContainerList } from '../contract/pod.ts';
import type { PodView, Role } from '../mesh/types.ts';
import { TOKEN_VOLUME_NAME, TOKEN_VOLUME_PREFIX } from '../pod/service-account-token.ts';
import { isObject } from '../util/json.ts';

type Volume = Readonly<Record<string, unknown>>;

/** Everything one judgement reads: the container and the parts of its PodView. */
export interface JudgementInput {
  readonly cfg: Compiled;
  readonly role: Role;
  readonly list: ContainerList;
  readonly container: Container;
  readonly first: PodView['first'];
  readonly serviceAccountName: PodView['serviceAccountName'];
  readonly gateway: PodView['gateway'];
  readonly appCapabilities: PodView['appCapabilities'];
  /** The pod's volumes the container mounts, `[name, volume]` in the order of its mounts. */
  readonly volumes: ReadonlyArray<readonly [string, Volume]>;
}

/** The PodView a judgement of `j` gets, built from nothing but `j` (so what the cache compares covers it). */
export function podViewOf(j: JudgementInput): PodView {
  return {
    volumes: new Map(j.volumes),
    serviceAccountName: j.serviceAccountName,
    gateway: j.gateway,
    first: j.first,
    appCapabilities: j.appCapabilities,
  };
}

/**
 * `j` with every volume name of the ServiceAccount token family (TOKEN_VOLUME_NAME: `kube-api-access-<random>`, which
 * the apiserver makes up for each pod) replaced, in its mounts and in its volumes, by `kube-api-access-<n>`, n its order
 * of first mount; undefined when `j` mounts none. The renaming is one to one and every new name passes
 * TOKEN_VOLUME_NAME, as every old one did; no name outside the family changes, and none can become one of it.
 *
 * A judgement reads a volume's name only to find the volume behind a mount (the same on both sides here) and to match
 * it against a contract's mount rules: a fixed name, never of this family (test/policy/verdict-cache.test.ts checks
 * every contract), or TOKEN_VOLUME_NAME itself. So a verdict on the renamed input is the verdict on `j`, save for the
 * names its message quotes: the cache judges `j` itself again for a problem whose message quotes one.
 */
export function renamed(j: JudgementInput): JudgementInput | undefined {
  const mounts: unknown = j.container.volumeMounts;
  if (!Array.isArray(mounts)) return undefined;
  let names: Map<string, string> | undefined;
  for (const m of mounts) {
    const name: unknown = isObject(m) ? m.name : undefined;
    if (typeof name !== 'string' || !name.startsWith(TOKEN_VOLUME_PREFIX) || !TOKEN_VOLUME_NAME.test(name)) continue;
    if (names?.has(name)) continue;
    names ??= new Map();
    names.set(name, `${TOKEN_VOLUME_PREFIX}${names.size}`);
  }
  if (!names) return undefined;
  const to = names;
  const mount = (m: unknown) => {
    const name = isObject(m) && typeof m.name === 'string' ? to.get(m.name) : undefined;
    return name === undefined ? m : { ...(m as object), name };
  };
  return {
    ...j,
    container: { ...j.container, volumeMounts: mounts.map(mount) } as Container,
    volumes: j.volumes.map(([name, v]) => {
      const as = to.get(name);
      return as === undefined ? [name, v] : [as, v.name === name ? { ...v, name: as } : v];
    }),
  };
}
