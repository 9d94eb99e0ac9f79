/**
 * meshgate's pods (label meshgate.io/redirect) in every namespace, listed and watched: what the webhook's pod cache
 * (only those not yet bound: `fieldSelector`) and the repair controller both follow, each with its own handlers.
 * `labelSelector` selects other pods meshgate labelled: the repair controller also follows those admitted below
 * enforce (meshgate.io/would-deny).
 */
import { REDIRECT_LABEL } from '../contract/names.ts';
import type { KubeClient } from './api/client.ts';
import { core } from './api/paths.ts';
import { Reflector, type ReflectorOptions } from './reflector.ts';

export type PodHandlers = Pick<ReflectorOptions, 'list' | 'upsert' | 'remove' | 'onSynced' | 'onError'>;

export function meshgatePodReflector(
  client: KubeClient,
  handlers: PodHandlers,
  o: { labelSelector?: string; fieldSelector?: string; initial?: ReflectorOptions['initial'] } = {},
): Reflector {
  const { labelSelector = REDIRECT_LABEL, ...rest } = o;
  return new Reflector({ client, path: core('pods'), labelSelector, ...rest, ...handlers });
}
