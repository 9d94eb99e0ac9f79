/**
 * `meshgate check`'s judging of the webhook configurations, their endpoints and their certificates, from
 * hand-written facts (src/check/facts.ts) and real certificates from a throwaway CA. No cluster, no module mocks.
 */
import { describe, expect, it } from 'vitest';
import type {
  Read,
  SecretCerts,
  ServiceEndpoints,
  TlsProbe,
  WebhookConfig,
  WebhookEntry,
} from '../../src/check/facts.ts';
import { EXPIRY_WARN_DAYS, judgeCaBundles, judgeCertificates, type CertFacts } from '../../src/check/judge-certs.ts';
import { endpointsOf, judgeEndpoints, judgeFailurePolicy, judgePresence } from '../../src/check/judge-webhook.ts';
import { matchesSelector, type LabelSelector } from '../../src/util/selector.ts';
import { CertificateAuthority } from '../e2e/harness/pki.ts';

const DAY = 86_400_000;
const b64 = (pem: string) => Buffer.from(pem).toString('base64');

function entry(name: string, over: Partial<WebhookEntry> = {}): WebhookEntry {
  return {
    name,
    service: { namespace: 'meshgate', name: 'meshgate', port: 443, path: '/mutate' },
    failurePolicy: 'Fail',
    ...over,
  };
}
const config = (kind: 'mutating' | 'validating', webhooks: WebhookEntry[]): WebhookConfig => ({
  kind,
  name: 'meshgate',
  webhooks,
});

describe('label selectors, as the apiserver evaluates them', () => {
  const labels = { 'meshgate.io/inject': 'enabled', 'kubernetes.io/metadata.name': 'shop', team: 'a' };
  const cases: Array<[string, LabelSelector | undefined, boolean]> = [
    ['absent selector', undefined, true],
    ['empty selector', {}, true],
    ['matchLabels hit', { matchLabels: { team: 'a' } }, true],
    ['matchLabels miss', { matchLabels: { team: 'b' } }, false],
    ['In', { matchExpressions: [{ key: 'meshgate.io/inject', operator: 'In', values: ['enabled'] }] }, true],
    ['In, key absent', { matchExpressions: [{ key: 'istio-injection', operator: 'In', values: ['enabled'] }] }, false],
    [
      'NotIn, key absent',
      { matchExpressions: [{ key: 'istio-injection', operator: 'NotIn', values: ['enabled'] }] },
      true,
    ],
    [
      'NotIn excluding this namespace',
      { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['shop'] }] },
      false,
    ],
    ['Exists', { matchExpressions: [{ key: 'team', operator: 'Exists' }] }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, false],
    [
      'labels and expressions must all hold',
      { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'istio.io/rev', operator: 'Exists' }] },
      false,
    ],
    [
      'an operator the apiserver refuses matches nothing',
      { matchExpressions: [{ key: 'team', operator: 'Gt', values: ['1'] }] },
      false,
    ],
  ];
  it.each(cases)('%s', (_, selector, want) => expect(matchesSelector(selector, labels)).toBe(want));
});

describe('webhook configurations', () => {
  it('says what is missing, unreadable, empty or present', () => {
    expect(judgePresence('mutating', 'meshgate', undefined)).toMatchObject({
      code: 'mutating_webhook_present',
      status: 'fail',
      message: 'MutatingWebhookConfiguration meshgate does not exist',
    });
    expect(judgePresence('validating', 'meshgate', { error: '403 Forbidden: no' })).toMatchObject({
      code: 'validating_webhook_present',
      status: 'warn',
    });
    expect(judgePresence('mutating', 'meshgate', config('mutating', []))).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('has no webhooks'),
    });
    expect(judgePresence('mutating', 'meshgate', config('mutating', [entry('a'), entry('b')]))).toMatchObject({
      status: 'ok',
      message: 'MutatingWebhookConfiguration meshgate: 2 webhooks',
    });
    const broken = judgePresence('mutating', 'meshgate', config('mutating', [entry('a', { service: undefined })]));
    expect(broken.status).toBe('fail');
    expect(broken.items).toEqual([expect.objectContaining({ name: 'a', status: 'fail' })]);
  });

  it('fails a validating webhook that fails open; a mutating one may (the validating webhook refuses what it let through)', () => {
    const m = config('mutating', [entry('m', { failurePolicy: 'Ignore' })]);
    expect(judgeFailurePolicy(m, config('validating', [entry('v')])).status).toBe('ok');
    expect(judgeFailurePolicy(m, config('validating', [entry('v', { failurePolicy: undefined })])).status).toBe('ok');
    const open = judgeFailurePolicy(m, config('validating', [entry('v', { failurePolicy: 'Ignore' })]));
    expect(open.status).toBe('fail');
    expect(open.items).toEqual([expect.objectContaining({ name: 'meshgate/v', status: 'fail' })]);
    expect(judgeFailurePolicy(m, undefined).status).toBe('skip');
  });

  it('audit and workload entries fail open by design (issue 34 §2); one that fails closed is a warning', () => {
    const path = (p: string) => ({ service: { namespace: 'meshgate', name: 'meshgate', port: 443, path: p } });
    const m = config('mutating', [entry('m'), entry('m-audit', { ...path('/mutate/audit'), failurePolicy: 'Ignore' })]);
    const open = [
      entry('v'),
      entry('v-audit', { ...path('/validate/audit'), failurePolicy: 'Ignore' }),
      entry('v.workloads', { ...path('/validate/workloads'), failurePolicy: 'Ignore' }),
      entry('v-warn.workloads', { ...path('/validate/workloads/warn'), failurePolicy: 'Ignore' }),
    ];
    expect(judgeFailurePolicy(m, config('validating', open)).status).toBe('ok');
    const closed = judgeFailurePolicy(
      m,
      config('validating', [...open, entry('v2-audit', { ...path('/validate/selected-pods/audit') })]),
    );
    expect(closed.status).toBe('warn');
    expect(closed.items).toEqual([
      expect.objectContaining({
        name: 'meshgate/v2-audit',
        message: expect.stringMatching(/Fail on an entry that audits/),
      }),
    ]);
    // A warn entry is no audit entry: it must still fail closed.
    const warn = judgeFailurePolicy(
      m,
      config('validating', [entry('v-warn', { ...path('/validate/warn'), failurePolicy: 'Ignore' })]),
    );
    expect(warn.status).toBe('fail');
  });

  it('judges each endpoint once: a Service by its ready endpoints, a URL by a TLS handshake', () => {
    const svc = (over: Partial<ServiceEndpoints>): ServiceEndpoints => ({
      namespace: 'meshgate',
      name: 'meshgate',
      ports: [{ name: 'https', port: 443 }],
      ready: 2,
      notReady: 0,
      ...over,
    });
    const m = config('mutating', [entry('a'), entry('b')]);
    const endpoints = endpointsOf([m, config('validating', [entry('v')])]);
    expect(endpoints.map((e) => e.key)).toEqual(['service meshgate/meshgate:443']);
    const judge = (s: Read<ServiceEndpoints>) => judgeEndpoints(endpoints, new Map([[endpoints[0].key, s]]), new Map());
    const cases: Array<[Read<ServiceEndpoints>, string, RegExp]> = [
      [undefined, 'fail', /does not exist/],
      [svc({ ports: [{ port: 8443 }] }), 'fail', /has no port 443 \(ports: 8443\)/],
      [svc({ ready: 0, notReady: 2 }), 'fail', /no ready endpoint \(2 not ready\)/],
      [svc({ ready: 1 }), 'warn', /a single ready endpoint/],
      [svc({ ready: 2, notReady: 1 }), 'ok', /2 ready endpoints, 1 not ready/],
      [{ error: '403 Forbidden' }, 'warn', /could not be read/],
    ];
    for (const [facts, status, message] of cases) {
      const r = judge(facts);
      expect(r.status).toBe(status);
      expect(r.items![0].message).toMatch(message);
    }
    const url = endpointsOf([
      config('mutating', [entry('u', { service: undefined, url: 'https://10.0.0.1:9443/mutate' })]),
    ]);
    expect(url[0]).toMatchObject({ key: 'url 10.0.0.1:9443', host: '10.0.0.1' });
    const probe = (p: Partial<TlsProbe>) =>
      judgeEndpoints(url, new Map(), new Map([[url[0].key, { target: '10.0.0.1:9443', host: '10.0.0.1', ...p }]]))
        .status;
    expect(probe({ error: 'ECONNREFUSED' })).toBe('warn');
    expect(probe({ chain: ['pem'] })).toBe('ok');
    expect(judgeEndpoints([], new Map(), new Map()).status).toBe('skip');
  });
});

describe('caBundle and serving certificate', () => {
  const ca = new CertificateAuthority('check-test-ca');
  const next = new CertificateAuthority('check-test-next-ca');
  const stranger = new CertificateAuthority('check-test-stranger');
  const host = 'meshgate.meshgate.svc';
  const leaf = ca.issue({ commonName: host, dnsNames: [host] });
  const now = Date.now();

  function facts(
    over: { caBundle?: string; probe?: string[]; secret?: Read<SecretCerts>; url?: string; now?: number } = {},
  ): CertFacts {
    const e = entry('inject', {
      caBundle: over.caBundle ?? b64(ca.certPem),
      ...(over.url ? { service: undefined, url: over.url } : {}),
    });
    const key = over.url ? `url ${new URL(over.url).host}` : 'service meshgate/meshgate:443';
    const probes = new Map<string, TlsProbe>(over.probe ? [[key, { target: 'x:443', host, chain: over.probe }]] : []);
    return {
      mutating: config('mutating', [e]),
      validating: undefined,
      probes,
      secret: 'secret' in over ? over.secret : { namespace: 'meshgate', name: 'meshgate-tls', tlsCrt: leaf.certPem },
      now: over.now ?? now,
    };
  }
  const trusted = (f: CertFacts) => judgeCertificates(f)[0];
  const expiry = (f: CertFacts) => judgeCertificates(f)[1];

  it('requires a parsable caBundle on every webhook, the same everywhere', () => {
    expect(judgeCaBundles(facts()).status).toBe('ok');
    expect(judgeCaBundles(facts({ caBundle: '' })).items![0].message).toMatch(/has no caBundle/);
    expect(judgeCaBundles(facts({ caBundle: b64('not a certificate') })).items![0].message).toMatch(
      /holds no PEM certificate/,
    );
    const two: CertFacts = {
      ...facts(),
      validating: config('validating', [entry('enforce', { caBundle: b64(next.certPem) })]),
    };
    expect(judgeCaBundles(two)).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('2 different caBundles'),
    });
  });

  it('trusts a serving certificate issued by a CA of the bundle, also the second of an overlapping (rotating) bundle', () => {
    expect(trusted(facts())).toMatchObject({ status: 'ok' });
    expect(trusted(facts()).items![0].message).toMatch(
      /^Secret meshgate\/meshgate-tls: issued by CN=check-test-ca, valid for meshgate.meshgate.svc$/,
    );
    expect(trusted(facts({ caBundle: b64(next.certPem + ca.certPem) })).status).toBe('ok');
  });

  it('prefers what a TLS handshake served over the Secret', () => {
    const served = stranger.issue({ commonName: host, dnsNames: [host] });
    const r = trusted(facts({ probe: [served.certPem] }));
    expect(r.status).toBe('fail');
    expect(r.items![0]).toMatchObject({
      reason: 'ca_mismatch',
      message: expect.stringContaining('TLS handshake with x:443 (issuer CN=check-test-stranger)'),
    });
  });

  it('fails a certificate from another CA, or one that does not name the host the apiserver dials', () => {
    const foreign = {
      namespace: 'meshgate',
      name: 'meshgate-tls',
      tlsCrt: stranger.issue({ commonName: host, dnsNames: [host] }).certPem,
    };
    expect(trusted(facts({ secret: foreign })).items![0].reason).toBe('ca_mismatch');
    const wrongName = {
      namespace: 'meshgate',
      name: 'meshgate-tls',
      tlsCrt: ca.issue({ commonName: 'other', dnsNames: ['other.meshgate.svc'] }).certPem,
    };
    expect(trusted(facts({ secret: wrongName })).items![0]).toMatchObject({
      reason: 'host_mismatch',
      message: expect.stringContaining('not valid for meshgate.meshgate.svc'),
    });
    const ip = ca.issue({ commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
    expect(trusted(facts({ url: 'https://127.0.0.1:8443/mutate', probe: [ip.certPem] })).status).toBe('ok');
    expect(trusted(facts({ url: 'https://127.0.0.2:8443/mutate', probe: [ip.certPem] })).items![0].reason).toBe(
      'host_mismatch',
    );
  });

  it('warns when it cannot see the serving certificate at all', () => {
    expect(trusted(facts({ secret: undefined })).items![0]).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('no TLS Secret was found'),
    });
    expect(trusted(facts({ secret: { error: '403 Forbidden' } })).items![0].message).toMatch(
      /could not be read: 403 Forbidden/,
    );
    expect(trusted(facts({ url: 'https://10.1.2.3/mutate' })).items![0].message).toMatch(
      /serving certificate not seen/,
    );
    expect(expiry(facts({ secret: undefined })).status).toBe('skip');
  });

  it('counts the days left of the leaf and its CA: warns inside 30 days, fails once expired', () => {
    expect(expiry(facts())).toMatchObject({ status: 'warn', message: 'the first certificate expires in 6 days' });
    const long = ca.issue({ commonName: host, dnsNames: [host], validDays: 400 });
    const longCa = facts({ secret: { namespace: 'meshgate', name: 'meshgate-tls', tlsCrt: long.certPem } });
    // The harness CA itself lives 7 days: the leaf is fine, its CA is not.
    expect(expiry(longCa).items!.map((i) => [i.name.split(' (')[0], i.status])).toEqual([
      ['serving certificate CN=meshgate.meshgate.svc', 'ok'],
      ['CA CN=check-test-ca', 'warn'],
    ]);
    expect(expiry(facts({ now: now + 8 * DAY }))).toMatchObject({
      status: 'fail',
      message: 'a certificate has expired',
    });
    expect(EXPIRY_WARN_DAYS).toBe(30);
  });
});
