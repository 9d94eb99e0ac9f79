/**
 * What the installed mesh says, kept from its own ConfigMaps by a watch per namespace of config.learnImages: the
 * images it injects (src/mesh/learn.ts: every revision's istio-sidecar-injector, or linkerd-config), its control
 * plane and trust roots (src/kube/learned-control-plane.ts: those and Istio's mesh config, Linkerd's
 * linkerd-identity-trust-roots) and, with Istio ambient on, istio-cni's enablement selectors and DNS capture
 * (src/policy/ambient/learn.ts: istio-cni-config). Only ConfigMaps an installed injector reads count: one its
 * MutatingWebhookConfiguration calls (src/kube/installed-injectors.ts, issue 33 §8). The
 * admission path never reads the API: on each change what the ConfigMaps say is handed to `onChange` (the server
 * compiles it into the configuration its handlers read). A ConfigMap that says nothing usable is logged and left
 * out, never trusted; two istio-cni-configs that disagree are both left out (the configured selectors apply).
 */
import type { Logger } from 'pino';
import { parse as parseYaml } from 'yaml';
import { ambientFromCniConfig, ISTIO_CNI_CONFIGMAP } from '../policy/ambient/learn.ts';
import type { LearnedAmbient, LearnedFromMesh } from '../config/learned.ts';
import { type Learned, type LearnedImages, unionImages } from '../mesh/learn.ts';
import { type ControlPlaneFacts, mergeControlPlane } from '../mesh/control-plane.ts';
import { isInstalled } from '../mesh/installed.ts';
import type { MeshProfile } from '../mesh/types.ts';
import { errorFields } from '../log/fields.ts';
import type { KubeClient } from './api/client.ts';
import { core } from './api/paths.ts';
import { Reflector } from './reflector.ts';
import { type ConfigMap, controlPlaneFromConfigMap } from './learned-control-plane.ts';
import { startInstalledInjectors } from './installed-injectors.ts';

export type { ConfigMap };

export interface LearnedImagesCache {
  /** Resolves once every namespace was listed (or its list failed and was logged: the watch keeps retrying). */
  synced: Promise<void>;
  current(): LearnedFromMesh;
  stop(): void;
}

/** istio-cni's ambient settings in one ConfigMap, read as the webhook reads them; undefined: not istio-cni-config. */
export function ambientFromConfigMap(cm: ConfigMap): LearnedAmbient | { problem: string } | undefined {
  if (cm.metadata?.name !== ISTIO_CNI_CONFIGMAP) return undefined;
  const text = cm.data?.AMBIENT_ENABLEMENT_SELECTOR;
  try {
    const selectors = text === undefined ? undefined : parseYaml(text, { maxAliasCount: 0 });
    return ambientFromCniConfig(selectors, cm.data?.AMBIENT_DNS_CAPTURE);
  } catch (err) {
    return { problem: `AMBIENT_ENABLEMENT_SELECTOR: ${(err as Error).message.split('\n')[0]}` };
  }
}

/** The one ambient setting every istio-cni-config agrees on, or undefined (none, or they disagree). */
export function agreedAmbient(all: Iterable<LearnedAmbient>): LearnedAmbient | undefined {
  const distinct = new Map([...all].map((a) => [JSON.stringify(a), a]));
  return distinct.size === 1 ? [...distinct.values()][0] : undefined;
}

/** What the usable ConfigMaps say together, as the configuration takes it (the webhook's watch, live explain). */
export function combineLearned(
  images: Iterable<LearnedImages>,
  ambient: Iterable<LearnedAmbient>,
  controlPlanes: Iterable<ControlPlaneFacts> = [],
): LearnedFromMesh {
  const agreed = agreedAmbient(ambient);
  const cps = [...controlPlanes];
  return {
    images: unionImages(images),
    ...(agreed ? { ambient: agreed } : {}),
    ...(cps.length ? { controlPlane: mergeControlPlane(...cps) } : {}),
  };
}

/**
 * What one ConfigMap says the mesh injects, read as the webhook reads it (live explain too); undefined when it is
 * not one of the mesh's ConfigMaps.
 */
export function learnFromConfigMap(profile: MeshProfile, cm: ConfigMap): Learned | undefined {
  const from = profile.learnFrom;
  if (!from?.configMap(cm.metadata?.name ?? '')) return undefined;
  const text = cm.data?.values;
  if (text === undefined) return { problem: 'it has no key values' };
  try {
    return from.images(from.format === 'json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 0 }));
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

export function startLearnedImages(
  kube: KubeClient,
  profile: MeshProfile,
  namespaces: readonly string[],
  logger: Logger,
  onChange: (learned: LearnedFromMesh) => void,
  opts: { ambient?: boolean } = {},
): LearnedImagesCache {
  const from = profile.learnFrom;
  const byKey = new Map<string, LearnedImages>();
  const ambientByKey = new Map<string, LearnedAmbient>();
  const cpByKey = new Map<string, ControlPlaneFacts>();
  // Only the ConfigMaps an installed injector reads are trusted (issue 33 §8, src/mesh/installed.ts); istio-cni's
  // ambient settings belong to no injector and are read as they are.
  let listed = false;
  const injectors = from
    ? startInstalledInjectors(kube, profile.name, logger, () => {
        if (listed) changed();
      })
    : undefined;
  const trusted = <T>(m: Map<string, T>): T[] => {
    const installed = injectors?.current();
    return [...m].flatMap(([key, v]) => {
      const [ns, name] = key.split('/');
      return installed && isInstalled(installed, ns, name) ? [v] : [];
    });
  };
  const current = () => combineLearned(trusted(byKey), ambientByKey.values(), trusted(cpByKey));
  const changed = () => {
    const learned = current();
    const installed = injectors?.current() ?? new Set<string>();
    const untrusted = [...byKey.keys(), ...cpByKey.keys()].filter((k) => {
      const [ns, name] = k.split('/');
      return !isInstalled(installed, ns, name);
    });
    logger.info(
      {
        learnedImages: learned.images,
        learnedAmbient: learned.ambient,
        learnedControlPlane: learned.controlPlane,
        configMaps: [...new Set([...byKey.keys(), ...cpByKey.keys(), ...ambientByKey.keys()])],
      },
      'what the mesh says it injects and enrols',
    );
    if (untrusted.length)
      logger.warn(
        { configMaps: [...new Set(untrusted)] },
        'mesh ConfigMaps no installed injector reads (no MutatingWebhookConfiguration calls it): not trusted',
      );
    if (ambientByKey.size > 1 && !learned.ambient)
      logger.warn(
        { configMaps: [...ambientByKey.keys()] },
        'istio-cni-configs disagree: the configured ambient selectors apply',
      );
    onChange(learned);
  };
  const key = (cm: ConfigMap) => `${cm.metadata?.namespace}/${cm.metadata?.name}`;
  /** Keeps what `cm` says in `into`, or drops its entry (the reason logged) when it says nothing usable; whether `into` changed. */
  const keep = <T extends object>(
    into: Map<string, T>,
    cm: ConfigMap,
    learned: T | { problem: string } | undefined,
    unusable: string,
  ): boolean => {
    if (!learned) return false;
    if ('problem' in learned) {
      logger.warn({ configMap: key(cm), problem: learned.problem }, unusable);
      return into.delete(key(cm));
    }
    into.set(key(cm), learned);
    return true;
  };
  const upsert = (item: unknown, announce = true) => {
    const cm = item as ConfigMap;
    const ambient =
      opts.ambient &&
      keep(
        ambientByKey,
        cm,
        ambientFromConfigMap(cm),
        'istio-cni-config not usable: the configured ambient selectors apply',
      );
    const images = keep(
      byKey,
      cm,
      learnFromConfigMap(profile, cm),
      'mesh ConfigMap not usable: its images are not trusted',
    );
    const cp =
      !!from &&
      keep(
        cpByKey,
        cm,
        controlPlaneFromConfigMap(profile.name, cm),
        'mesh ConfigMap not usable: its control plane is not trusted',
      );
    if ((ambient || images || cp) && announce) changed();
  };
  const reflectors =
    from || opts.ambient
      ? namespaces.map(
          (namespace) =>
            new Reflector({
              client: kube,
              path: core('configmaps', { namespace }),
              list: () => {
                for (const m of [byKey, ambientByKey, cpByKey])
                  for (const k of [...m.keys()]) if (k.startsWith(`${namespace}/`)) m.delete(k);
                return { add: (i) => upsert(i, false), done: changed };
              },
              upsert: (i) => upsert(i),
              remove: (i) => {
                const k = key(i as ConfigMap);
                if ([byKey.delete(k), ambientByKey.delete(k), cpByKey.delete(k)].some(Boolean)) changed();
              },
              onError: (err) =>
                logger.warn({ err: errorFields(err), namespace }, 'mesh ConfigMap watch interrupted; resuming'),
            }),
        )
      : [];
  const synced = Promise.all([
    injectors?.synced,
    ...reflectors.map((r) =>
      r
        .start()
        .catch((err) => logger.warn({ err: errorFields(err) }, 'mesh ConfigMaps not listed: learning no images')),
    ),
  ]).then(() => {
    listed = true;
    changed();
  });
  return {
    synced,
    current,
    stop: () => {
      injectors?.stop();
      for (const r of reflectors) r.stop();
    },
  };
}
