/**
 * The mesh's installed injectors, from a watch of the cluster's MutatingWebhookConfigurations (issue 33 §8): which of
 * the mesh's ConfigMaps an injector really reads (src/mesh/installed.ts), so that only those are learned from
 * (src/kube/learned-images.ts). Until the first list, or while it cannot list (RBAC: the chart grants list/watch when
 * learnImages is on), no ConfigMap is trusted: the configured values apply alone, and the log says why.
 */
import type { Logger } from 'pino';
import { installedConfigMaps, type WebhookConfigView, webhookConfigView } from '../mesh/installed.ts';
import type { MeshName } from '../mesh/types.ts';
import { errorFields } from '../log/fields.ts';
import type { KubeClient } from './api/client.ts';
import { group } from './api/paths.ts';
import { Reflector } from './reflector.ts';

export interface InstalledInjectors {
  /** Resolves after the first list, or once its failure was logged (the watch keeps retrying). */
  synced: Promise<void>;
  /** The ConfigMaps an installed injector reads, as `namespace/name` (`*\/name`: any learned namespace). */
  current(): ReadonlySet<string>;
  stop(): void;
}

export function startInstalledInjectors(
  kube: KubeClient,
  mesh: MeshName,
  logger: Logger,
  onChange: () => void,
): InstalledInjectors {
  let views = new Map<string, WebhookConfigView>();
  let installed: ReadonlySet<string> = new Set();
  const recompute = () => {
    installed = installedConfigMaps(mesh, views.values());
    logger.info(
      { injectorConfigMaps: [...installed], webhookConfigurations: views.size },
      "the mesh's installed injectors and the ConfigMaps they read",
    );
    onChange();
  };
  const reflector = new Reflector({
    client: kube,
    path: group('admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations'),
    list: () => {
      const next = new Map<string, WebhookConfigView>();
      return {
        add: (i) => {
          const v = webhookConfigView(i);
          if (v) next.set(v.name, v);
        },
        done: () => {
          views = next;
          recompute();
        },
      };
    },
    upsert: (i) => {
      const v = webhookConfigView(i);
      if (!v) return;
      views.set(v.name, v);
      recompute();
    },
    remove: (i) => {
      const v = webhookConfigView(i);
      if (v && views.delete(v.name)) recompute();
    },
    onError: (err) =>
      logger.warn({ err: errorFields(err) }, 'MutatingWebhookConfiguration watch interrupted; resuming'),
  });
  const synced = reflector
    .start()
    .catch((err) =>
      logger.warn(
        { err: errorFields(err) },
        "MutatingWebhookConfigurations not listed: no mesh ConfigMap is trusted until they are (the mesh's injectors are unknown)",
      ),
    );
  return { synced: synced.then(() => undefined), current: () => installed, stop: () => reflector.stop() };
}
