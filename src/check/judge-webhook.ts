/**
 * Judges meshgate's two webhook configurations and where they point: present, failing closed, each endpoint
 * ready (a Service with ready endpoints, or a URL that answers a TLS handshake). Pure: facts in, results out.
 */
import {
  isReadError,
  type Read,
  type ServiceEndpoints,
  type TlsProbe,
  type WebhookConfig,
  type WebhookEntry,
  type WebhookKind,
} from './facts.ts';
import { result, worst, type CheckResult, type Item } from './report.ts';

const KIND_NAMES: Record<WebhookKind, string> = {
  mutating: 'MutatingWebhookConfiguration',
  validating: 'ValidatingWebhookConfiguration',
};

type ServiceRef = { namespace: string; name: string; port: number };

/** Where a webhook entry sends its calls, a Service or a URL; entries sharing an endpoint are judged once. */
export type WebhookEndpoint = {
  key: string;
  /** The host the apiserver verifies the serving certificate for. */
  host: string;
} & ({ service: ServiceRef; url?: undefined } | { url: string; service?: undefined });

export function endpointOf(w: WebhookEntry): WebhookEndpoint | undefined {
  if (w.service) {
    const { namespace, name, port } = w.service;
    return {
      key: `service ${namespace}/${name}:${port}`,
      host: `${name}.${namespace}.svc`,
      service: { namespace, name, port },
    };
  }
  if (w.url) {
    try {
      const u = new URL(w.url);
      return { key: `url ${u.host}`, host: u.hostname, url: w.url };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The path an entry calls (its Service's path, or its URL's); '' when it names none or an invalid URL. */
export function entryPath(e: WebhookEntry): string {
  if (!e.url) return e.service?.path ?? '';
  try {
    return new URL(e.url).pathname;
  } catch {
    return '';
  }
}

/**
 * A workload-template entry (src/admission/workload.ts: `/validate/workloads…`): it judges Deployments and their kin
 * at apply time, not pods, so it neither guards a namespace's pods nor has to fail closed.
 */
export const isWorkloadEntry = (e: WebhookEntry): boolean => entryPath(e).startsWith('/validate/workloads');

/** An entry of the audit level (`…/audit`), which refuses nothing and so must fail open (docs/security.md). */
const isAuditEntry = (e: WebhookEntry): boolean => entryPath(e).endsWith('/audit');

/** Every entry of the configurations found, with the configuration it belongs to. */
export function entriesOf(
  configs: readonly Read<WebhookConfig>[],
): Array<{ config: WebhookConfig; entry: WebhookEntry }> {
  return configs.flatMap((c) => (c && !isReadError(c) ? c.webhooks.map((entry) => ({ config: c, entry })) : []));
}

export function endpointsOf(configs: readonly Read<WebhookConfig>[]): WebhookEndpoint[] {
  const byKey = new Map<string, WebhookEndpoint>();
  for (const { entry } of entriesOf(configs)) {
    const e = endpointOf(entry);
    if (e && !byKey.has(e.key)) byKey.set(e.key, e);
  }
  return [...byKey.values()];
}

export function judgePresence(kind: WebhookKind, name: string, c: Read<WebhookConfig>): CheckResult {
  const code = kind === 'mutating' ? 'mutating_webhook_present' : 'validating_webhook_present';
  const what = `${KIND_NAMES[kind]} ${name}`;
  if (c === undefined) return result(code, 'fail', `${what} does not exist`);
  if (isReadError(c)) return result(code, 'warn', `${what} could not be read: ${c.error}`);
  if (c.webhooks.length === 0) return result(code, 'fail', `${what} has no webhooks: it sends nothing to meshgate`);
  const items = c.webhooks.map((w): Item => {
    const e = endpointOf(w);
    return e
      ? {
          name: w.name,
          status: 'ok',
          message: `calls ${e.url ?? `${e.key.slice('service '.length)}${w.service?.path ?? ''}`}`,
        }
      : { name: w.name, status: 'fail', message: 'has neither a Service nor a valid URL in its clientConfig' };
  });
  const status = worst(items.map((i) => i.status));
  return result(
    code,
    status,
    `${what}: ${c.webhooks.length} webhook${c.webhooks.length === 1 ? '' : 's'}`,
    status === 'ok' ? undefined : items,
  );
}

export function judgeFailurePolicy(mutating: Read<WebhookConfig>, validating: Read<WebhookConfig>): CheckResult {
  const items: Item[] = [];
  for (const { config, entry } of entriesOf([mutating, validating])) {
    // The v1 API defaults failurePolicy to Fail.
    const policy = entry.failurePolicy ?? 'Fail';
    const name = `${config.name}/${entry.name}`;
    if (isWorkloadEntry(entry) || isAuditEntry(entry)) {
      // These refuse nothing a pod needs (audit records; workload templates only tell earlier what pods meet).
      if (policy === 'Fail')
        items.push({
          name,
          status: 'warn',
          message:
            `failurePolicy Fail on an entry that ${isWorkloadEntry(entry) ? 'judges workload templates' : 'audits'}: ` +
            'while meshgate is unreachable the apiserver refuses what meshgate itself would admit (the chart renders Ignore)',
        });
    } else if (config.kind === 'validating' && policy !== 'Fail') {
      items.push({
        name,
        status: 'fail',
        message: `validating failurePolicy is ${policy}: while meshgate is unreachable, pods start unchecked`,
      });
    } else if (config.kind === 'mutating' && policy !== 'Fail') {
      const outage = 'pods created during an outage are refused by the validating webhook';
      items.push({ name, status: 'ok', message: `mutating failurePolicy ${policy}: ${outage}` });
    }
  }
  if (entriesOf([validating]).length === 0)
    return { code: 'webhook_failure_policy', status: 'skip', message: 'not checked: no validating webhooks' };
  const status = worst(items.map((i) => i.status).concat('ok'));
  const message =
    status === 'fail'
      ? 'a validating webhook fails open'
      : status === 'warn'
        ? 'an audit or workload entry fails closed'
        : 'the validating webhooks fail closed (failurePolicy Fail); audit and workload entries fail open';
  return result(
    'webhook_failure_policy',
    status,
    message,
    items.filter((i) => i.status !== 'ok'),
  );
}

function serviceItem(s: ServiceRef, svc: Read<ServiceEndpoints>): Item {
  const name = `Service ${s.namespace}/${s.name}`;
  if (svc === undefined)
    return { name, status: 'fail', message: 'does not exist: the apiserver cannot call the webhook' };
  if (isReadError(svc)) return { name, status: 'warn', message: `could not be read: ${svc.error}` };
  if (!svc.ports.some((p) => p.port === s.port)) {
    return {
      name,
      status: 'fail',
      message: `has no port ${s.port} (ports: ${svc.ports.map((p) => p.port).join(', ') || 'none'})`,
    };
  }
  if (svc.ready === 0)
    return {
      name,
      status: 'fail',
      message: `has no ready endpoint (${svc.notReady} not ready): every admission call fails`,
    };
  const notReady = svc.notReady ? `, ${svc.notReady} not ready` : '';
  const spare = svc.ready === 1 ? '; a single ready endpoint: its restart is an outage' : '';
  return {
    name,
    status: svc.ready === 1 ? 'warn' : 'ok',
    message: `${svc.ready} ready endpoint${svc.ready === 1 ? '' : 's'}${notReady}${spare}`,
  };
}

function urlItem(name: string, probe: TlsProbe | undefined): Item {
  if (!probe) return { name, status: 'skip', message: 'not probed' };
  if (probe.error)
    return {
      name,
      status: 'warn',
      message: `not reachable from here (${probe.error}); the apiserver may still reach it`,
    };
  return { name, status: 'ok', message: 'answers a TLS handshake' };
}

export function judgeEndpoints(
  endpoints: readonly WebhookEndpoint[],
  services: ReadonlyMap<string, Read<ServiceEndpoints>>,
  probes: ReadonlyMap<string, TlsProbe>,
): CheckResult {
  if (endpoints.length === 0)
    return { code: 'webhook_endpoints_ready', status: 'skip', message: 'not checked: no webhook to follow' };
  const items = endpoints.map((e) =>
    e.service ? serviceItem(e.service, services.get(e.key)) : urlItem(e.url, probes.get(e.key)),
  );
  const status = worst(items.map((i) => i.status));
  const failed = items.filter((i) => i.status === 'fail').length;
  const n = endpoints.length;
  const message = failed
    ? `${failed} of ${n} webhook endpoint${n === 1 ? '' : 's'} not ready`
    : `${n === 1 ? 'the webhook endpoint is' : `all ${n} webhook endpoints are`} ready` +
      (status === 'ok' ? '' : ', with a warning');
  return result('webhook_endpoints_ready', status, message, items);
}
