/**
 * meshgate's pods (label meshgate.io/redirect) in every namespace, listed and watched: what the webhook's pod cache
 * and the repair controller both follow, each with its own handlers. `labelSelector` selects other pods meshgate
 * labelled: the repair controller also follows those admitted below enforce (meshgate.io/would-deny).
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { REDIRECT_LABEL } from '../inject/constants.ts';
import { Reflector, type ListPage, type ReflectorOptions } from './reflector.ts';

export type PodHandlers = Pick<ReflectorOptions, 'replace' | 'upsert' | 'remove' | 'onSynced' | 'onError'>;

export function meshgatePodReflector(
  kc: KubeConfig,
  handlers: PodHandlers,
  labelSelector: string = REDIRECT_LABEL,
): Reflector {
  const api = kc.makeApiClient(CoreV1Api);
  return new Reflector({
    kc,
    path: '/api/v1/pods',
    labelSelector,
    list: (p) =>
      api.listPodForAllNamespaces({
        limit: p.limit,
        _continue: p._continue,
        labelSelector: p.labelSelector,
      }) as unknown as Promise<ListPage>,
    ...handlers,
  });
}
