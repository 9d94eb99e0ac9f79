// The daemons' kubeconfig reader and in-cluster credentials: what they accept, and that everything else is refused
// with the field named (exec plugins and OIDC stay with the CLI's full client).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accessFromKubeconfig, inClusterAccess, kubeconfigAccess } from '../../../src/kube/api/access.ts';

const dir = mkdtempSync(join(tmpdir(), 'meshgate-access-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown> = { token: 'abc' }) {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  };
}

const read = (doc: unknown) => accessFromKubeconfig(JSON.stringify(doc), '/etc/kc');

describe('kubeconfig', () => {
  it('server, inline CA and token', async () => {
    const a = await read(kubeconfig({ 'certificate-authority-data': b64('CA PEM') }));
    expect(a).toMatchObject({ server: 'https://10.0.0.1:6443', ca: 'CA PEM', token: 'abc', source: '/etc/kc' });
    expect(a.cert).toBeUndefined();
  });

  it('files relative to the kubeconfig, client certificate and key, tls-server-name', async () => {
    mkdirSync(join(dir, 'pki'), { recursive: true });
    writeFileSync(join(dir, 'pki', 'ca.crt'), 'CA');
    writeFileSync(join(dir, 'pki', 'client.crt'), 'CERT');
    writeFileSync(join(dir, 'pki', 'client.key'), 'KEY');
    const path = join(dir, 'kubeconfig.yaml');
    // YAML, as kubectl writes it.
    writeFileSync(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: c',
        '  cluster: {server: "https://h:6443/", certificate-authority: pki/ca.crt, tls-server-name: api.internal}',
        'users:',
        '- name: u',
        '  user: {client-certificate: pki/client.crt, client-key: pki/client.key}',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    expect(await kubeconfigAccess(path)).toMatchObject({
      server: 'https://h:6443',
      ca: 'CA',
      cert: 'CERT',
      key: 'KEY',
      tlsServerName: 'api.internal',
    });
  });

  it('a token file, kept as a path (the client re-reads it as it rotates)', async () => {
    const a = await read(kubeconfig({}, { tokenFile: 'token' }));
    expect(a.tokenFile).toBe('/etc/token');
    expect(a.token).toBeUndefined();
  });

  it('impersonation (as, as-groups, as-user-extra)', async () => {
    const a = await read(
      kubeconfig(
        {},
        { token: 't', as: 'system:node:n1', 'as-groups': ['system:nodes'], 'as-user-extra': { k: ['v'] } },
      ),
    );
    expect(a.impersonate).toEqual({ user: 'system:node:n1', groups: ['system:nodes'], extra: { k: ['v'] } });
  });

  it('null fields (as client-node exports them) count as absent', async () => {
    const a = await read(kubeconfig({ 'insecure-skip-tls-verify': null }, { token: 't', exec: null, password: null }));
    expect(a.token).toBe('t');
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown> | undefined, RegExp]>([
    ['an exec plugin', {}, { exec: { command: 'aws' } }, /users\[u\]\.user\.exec is not supported.*CLI/],
    ['an auth provider', {}, { 'auth-provider': { name: 'oidc' } }, /auth-provider is not supported.*CLI/],
    ['basic auth', {}, { username: 'a', password: 'b' }, /username is not supported/],
    [
      'skipping TLS verification',
      { 'insecure-skip-tls-verify': true },
      undefined,
      /insecure-skip-tls-verify.*always verify/,
    ],
    ['a proxy', { 'proxy-url': 'http://p:3128' }, undefined, /proxy-url is not supported/],
    [
      'an unknown field',
      { 'certificate-authority-datum': 'x' },
      undefined,
      /certificate-authority-datum is not supported/,
    ],
    ['plain HTTP', { server: 'http://10.0.0.1:8080' }, undefined, /only https:\/\//],
    ['a certificate without its key', {}, { 'client-certificate-data': b64('C') }, /needs its key/],
  ])('refuses %s, naming the field', async (_name, cluster, user, message) => {
    await expect(read(kubeconfig(cluster, user))).rejects.toThrow(message);
  });

  it('refuses a kubeconfig without a current context or with a dangling name', async () => {
    await expect(read({ ...kubeconfig({}), 'current-context': '' })).rejects.toThrow(/no current-context/);
    await expect(read({ ...kubeconfig({}), 'current-context': 'y' })).rejects.toThrow(/no context named y/);
    await expect(accessFromKubeconfig(': : :', '/etc/kc')).rejects.toThrow(/\/etc\/kc: not YAML or JSON/);
    await expect(kubeconfigAccess(join(dir, 'missing'))).rejects.toThrow(/cannot read the kubeconfig/);
  });
});

describe('in-cluster', () => {
  it('the service account mounted by the kubelet: server from the environment, the CA, the token file', () => {
    const sa = join(dir, 'sa');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'jwt');
    writeFileSync(join(sa, 'ca.crt'), 'CLUSTER CA');
    const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    expect(inClusterAccess(env, sa)).toEqual({
      server: 'https://10.96.0.1:443',
      ca: 'CLUSTER CA',
      tokenFile: join(sa, 'token'),
      source: 'in-cluster service account',
    });
    expect(inClusterAccess({ ...env, KUBERNETES_SERVICE_HOST: 'fd00::1' }, sa)?.server).toBe('https://[fd00::1]:443');
  });

  it('none outside a pod: no KUBERNETES_SERVICE_HOST, or no token', () => {
    expect(inClusterAccess({}, join(dir, 'sa'))).toBeUndefined();
    expect(inClusterAccess({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, join(dir, 'nothing'))).toBeUndefined();
  });
});
