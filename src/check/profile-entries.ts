/**
 * The webhook entries the chart renders for a configuration with its default selectors (webhook.selectors empty),
 * as `meshgate check --pre` needs them before anything is installed: which namespaces and pods would be guarded,
 * and at which enforcement level. A mirror of charts/meshgate/templates/_webhooks.tpl (profile entries, pod opt-in,
 * the exclusion of the release and system namespaces, one entry per level); test/chart/profile-entries.test.ts
 * holds the two equal, rendered by the real helm. Pure.
 */
import { LEVELS } from '../admission/level.ts';
import type { MeshgateConfig } from '../config/types.ts';
import type { DeepReadonly } from '../util/readonly.ts';
import type { WebhookEntry } from './facts.ts';
import type { LabelSelector, Requirement } from '../util/selector.ts';

const INJECT = 'meshgate.io/inject';
import { ENFORCEMENT_LABEL as ENFORCEMENT } from '../contract/names.ts';

interface Base {
  name: string;
  namespaceSelector: LabelSelector;
  objectSelector?: LabelSelector;
}

const req = (key: string, operator: string, values?: string[]): Requirement =>
  values ? { key, operator, values } : { key, operator };

/** Namespaces none of the profile's namespace entries selects (where pod-level opt-in applies). */
function unlabelled(mesh: string): Requirement[] {
  const out = [req(INJECT, 'NotIn', ['enabled'])];
  if (mesh === 'istio') out.push(req('istio-injection', 'DoesNotExist'), req('istio.io/rev', 'DoesNotExist'));
  return out;
}

function profileEntries(c: DeepReadonly<MeshgateConfig>): Base[] {
  const out: Base[] = [
    { name: 'ns-meshgate', namespaceSelector: { matchExpressions: [req(INJECT, 'In', ['enabled'])] } },
  ];
  if (c.mesh === 'istio') {
    out.push(
      {
        name: 'ns-istio-injection',
        namespaceSelector: {
          matchExpressions: [req(INJECT, 'NotIn', ['enabled']), req('istio-injection', 'In', ['enabled'])],
        },
      },
      {
        name: 'ns-istio-rev',
        namespaceSelector: {
          matchExpressions: [
            req(INJECT, 'NotIn', ['enabled']),
            req('istio-injection', 'DoesNotExist'),
            req('istio.io/rev', 'Exists'),
          ],
        },
      },
      {
        name: 'pod-istio-inject',
        namespaceSelector: { matchExpressions: unlabelled('istio') },
        objectSelector: {
          matchExpressions: [req('sidecar.istio.io/inject', 'In', ['true']), req('istio.io/rev', 'DoesNotExist')],
        },
      },
      {
        name: 'pod-istio-rev',
        namespaceSelector: { matchExpressions: unlabelled('istio') },
        objectSelector: { matchExpressions: [req('istio.io/rev', 'Exists')] },
      },
    );
  }
  const optIn = c.injection.podOptInNamespaceLabels;
  if (optIn) {
    const pod = [req(INJECT, 'In', ['true'])];
    if (c.mesh === 'istio')
      pod.push(req('sidecar.istio.io/inject', 'NotIn', ['true']), req('istio.io/rev', 'DoesNotExist'));
    out.push({
      name: 'pod-optin',
      namespaceSelector: { matchLabels: { ...optIn }, matchExpressions: unlabelled(c.mesh) },
      objectSelector: { matchExpressions: pod },
    });
  }
  return out;
}

/**
 * The chart's entries (both configurations have the same), each once per level, with the path it would call on the
 * chart's Service `service` in `c.meshNamespace`, and its failurePolicy with the chart's defaults: Fail, but Ignore
 * at the audit level, which refuses nothing and so must not refuse while meshgate is down either.
 */
export function chartEntries(c: DeepReadonly<MeshgateConfig>, service = 'meshgate'): WebhookEntry[] {
  const excluded = [...new Set([c.meshNamespace, ...c.systemNamespaces])];
  const def = c.enforcement.default;
  return profileEntries(c).flatMap((e) =>
    LEVELS.map((level) => {
      const levelReq =
        level === def
          ? req(
              ENFORCEMENT,
              'NotIn',
              LEVELS.filter((l) => l !== level),
            )
          : req(ENFORCEMENT, 'In', [level]);
      const scope = e.objectSelector ? '/selected-pods' : '';
      const entry: WebhookEntry = {
        name: level === 'enforce' ? e.name : `${e.name}-${level}`,
        failurePolicy: level === 'audit' ? 'Ignore' : 'Fail',
        service: {
          namespace: c.meshNamespace,
          name: service,
          port: 443,
          path: `/mutate${scope}${level === 'enforce' ? '' : `/${level}`}`,
        },
        namespaceSelector: {
          ...(e.namespaceSelector.matchLabels ? { matchLabels: e.namespaceSelector.matchLabels } : {}),
          matchExpressions: [
            ...(e.namespaceSelector.matchExpressions ?? []),
            req('kubernetes.io/metadata.name', 'NotIn', excluded),
            levelReq,
          ],
        },
      };
      return e.objectSelector ? { ...entry, objectSelector: e.objectSelector } : entry;
    }),
  );
}
