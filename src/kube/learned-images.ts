/**
 * The images the installed mesh injects, kept from its own ConfigMaps (src/mesh/learn.ts) by a watch per namespace
 * of config.learnImages: every revision's istio-sidecar-injector, or linkerd-config. The admission path never reads
 * the API: on each change the union of what the ConfigMaps say is handed to `onChange` (the server compiles it into
 * the configuration its handlers read). A ConfigMap that says nothing usable is logged and left out, never trusted.
 */
import type { Logger } from 'pino';
import { parse as parseYaml } from 'yaml';
import { type Learned, type LearnedImages, unionImages } from '../mesh/learn.ts';
import type { MeshProfile } from '../mesh/types.ts';
import { errorFields } from '../log/fields.ts';
import type { KubeClient } from './api/client.ts';
import { core } from './api/paths.ts';
import { Reflector } from './reflector.ts';

export type ConfigMap = { metadata?: { name?: string; namespace?: string }; data?: Record<string, string> };

export interface LearnedImagesCache {
  /** Resolves once every namespace was listed (or its list failed and was logged: the watch keeps retrying). */
  synced: Promise<void>;
  current(): LearnedImages;
  stop(): void;
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
  onChange: (images: LearnedImages) => void,
): LearnedImagesCache {
  const from = profile.learnFrom;
  const byKey = new Map<string, LearnedImages>();
  const changed = () => {
    const images = unionImages(byKey.values());
    logger.info({ learnedImages: images, configMaps: [...byKey.keys()] }, 'images the mesh injects');
    onChange(images);
  };
  const key = (cm: ConfigMap) => `${cm.metadata?.namespace}/${cm.metadata?.name}`;
  const upsert = (item: unknown, announce = true) => {
    const cm = item as ConfigMap;
    const learned = learnFromConfigMap(profile, cm);
    if (!learned) return;
    if ('problem' in learned) {
      logger.warn(
        { configMap: key(cm), problem: learned.problem },
        'mesh ConfigMap not usable: its images are not trusted',
      );
      if (byKey.delete(key(cm)) && announce) changed();
      return;
    }
    byKey.set(key(cm), learned);
    if (announce) changed();
  };
  const reflectors = from
    ? namespaces.map(
        (namespace) =>
          new Reflector({
            client: kube,
            path: core('configmaps', { namespace }),
            replace: (items) => {
              for (const k of [...byKey.keys()]) if (k.startsWith(`${namespace}/`)) byKey.delete(k);
              for (const i of items) upsert(i, false);
              changed();
            },
            upsert: (i) => upsert(i),
            remove: (i) => {
              if (byKey.delete(key(i as ConfigMap))) changed();
            },
            onError: (err) =>
              logger.warn({ err: errorFields(err), namespace }, 'mesh ConfigMap watch interrupted; resuming'),
          }),
      )
    : [];
  const synced = Promise.all(
    reflectors.map((r) =>
      r
        .start()
        .catch((err) => logger.warn({ err: errorFields(err) }, 'mesh ConfigMaps not listed: learning no images')),
    ),
  ).then(() => undefined);
  return {
    synced,
    current: () => unionImages(byKey.values()),
    stop: () => {
      for (const r of reflectors) r.stop();
    },
  };
}
