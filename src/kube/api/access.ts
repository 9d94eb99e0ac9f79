/**
 * Where the daemons' apiserver is and who they are to it: the in-cluster service account (the token file, re-read by
 * the client as the kubelet rotates it, and the cluster CA), or a kubeconfig limited to what a daemon needs — a
 * server, its CA, and a client certificate and key or a bearer token (optionally impersonating, as kubectl's `--as`
 * does). Anything else a kubeconfig may hold (exec plugins, auth providers, basic auth, proxies, skipping TLS
 * verification) is refused with the field named: those stay with the CLI's full client (`meshgate check`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

/** Where the kubelet mounts a pod's service-account token and the cluster CA. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface Impersonation {
  user: string;
  groups: string[];
  extra: Record<string, string[]>;
}

export interface ClusterAccess {
  /** https://host:port — never plain HTTP: credentials go over it. */
  server: string;
  /** PEM bundle the server's certificate must chain to; undefined: the system's roots. */
  ca?: string;
  /** The name to check the server's certificate against when it is not the server URL's host. */
  tlsServerName?: string;
  /** A bearer token read from this file, re-read as it rotates (the service account's projected token). */
  tokenFile?: string;
  token?: string;
  /** Client certificate and key (PEM). */
  cert?: string;
  key?: string;
  impersonate?: Impersonation;
  /** Where this came from, for messages: "in-cluster service account" or the kubeconfig's path. */
  source: string;
}

export class AccessError extends Error {
  override name = 'AccessError';
}

/** The in-cluster service account, or undefined when this is not a pod (no KUBERNETES_SERVICE_HOST or no token). */
export function inClusterAccess(
  env: Readonly<Record<string, string | undefined>>,
  dir = SERVICE_ACCOUNT_DIR,
): ClusterAccess | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  const tokenFile = join(dir, 'token');
  if (!host || !existsSync(tokenFile)) return undefined;
  const caFile = join(dir, 'ca.crt');
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca: readText(caFile, 'the in-cluster CA'),
    tokenFile,
    source: 'in-cluster service account',
  };
}

type Obj = Record<string, unknown>;

const CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'tls-server-name']);
const USER_FIELDS = new Set([
  'token',
  'tokenFile',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'as',
  'as-groups',
  'as-user-extra',
]);
/** Fields a kubeconfig may carry that mean nothing to a connection (kubectl's own settings). */
const IGNORED = new Set(['extensions', 'disable-compression']);
const WHY: Record<string, string> = {
  exec: 'exec credential plugins run only in the CLI (meshgate check)',
  'auth-provider': 'auth providers (OIDC, cloud) run only in the CLI (meshgate check)',
  username: 'basic authentication is not supported by the daemons',
  password: 'basic authentication is not supported by the daemons',
  'insecure-skip-tls-verify': 'the daemons always verify the apiserver certificate; give certificate-authority',
  'proxy-url': 'the daemons connect to the apiserver directly',
};

/** A kubeconfig file's current context, read as described above. */
export async function kubeconfigAccess(path: string): Promise<ClusterAccess> {
  return accessFromKubeconfig(readText(path, 'the kubeconfig'), path);
}

/** The same from the kubeconfig's text (JSON, or YAML: the YAML parser is loaded only for a file that is not JSON). */
export async function accessFromKubeconfig(text: string, path: string): Promise<ClusterAccess> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    const { parse } = await import('yaml');
    try {
      doc = parse(text);
    } catch (err) {
      throw new AccessError(`${path}: not YAML or JSON: ${(err as Error).message}`);
    }
  }
  return accessFromDocument(doc, path);
}

/** The same from a kubeconfig already parsed. */
export function accessFromDocument(doc: unknown, path: string): ClusterAccess {
  const fail = (msg: string): never => {
    throw new AccessError(`${path}: ${msg}`);
  };
  if (!isObj(doc)) return fail('not a kubeconfig (expected an object)');
  const current = doc['current-context'];
  if (typeof current !== 'string' || !current) return fail('no current-context');
  const context = named(doc.contexts, current, 'context', fail) as Obj;
  const clusterName = context.cluster;
  const userName = context.user;
  if (typeof clusterName !== 'string') return fail(`context ${current} names no cluster`);
  const cluster = named(doc.clusters, clusterName, 'cluster', fail) as Obj;
  const user = typeof userName === 'string' && userName ? (named(doc.users, userName, 'user', fail) as Obj) : {};
  const base = dirname(path);
  const where = (kind: string, name: unknown, key: string) => `${kind}s[${String(name)}].${kind}.${key}`;
  for (const [fields, obj, kind, name] of [
    [CLUSTER_FIELDS, cluster, 'cluster', clusterName],
    [USER_FIELDS, user, 'user', userName],
  ] as const) {
    for (const [key, value] of Object.entries(obj)) {
      if (value === null || value === undefined || value === false || IGNORED.has(key) || fields.has(key)) continue;
      if (Array.isArray(value) && value.length === 0) continue;
      fail(`${where(kind, name, key)} is not supported here: ${WHY[key] ?? 'the daemons do not know this field'}`);
    }
  }
  const str = (obj: Obj, key: string, kind: string, name: unknown): string | undefined => {
    const v = obj[key];
    if (v === null || v === undefined || v === '') return undefined;
    if (typeof v !== 'string') return fail(`${where(kind, name, key)} must be a string`);
    return v;
  };
  const inline = (obj: Obj, key: string, kind: string, name: unknown): string | undefined => {
    const data = str(obj, `${key}-data`, kind, name);
    if (data !== undefined) return Buffer.from(data, 'base64').toString('utf8');
    const file = str(obj, key, kind, name);
    return file === undefined
      ? undefined
      : readText(isAbsolute(file) ? file : join(base, file), where(kind, name, key));
  };
  const server = str(cluster, 'server', 'cluster', clusterName) ?? fail(`cluster ${clusterName} has no server`);
  if (!server.startsWith('https://'))
    fail(`${where('cluster', clusterName, 'server')} ${server}: only https:// (credentials travel over it)`);
  const cert = inline(user, 'client-certificate', 'user', userName);
  const key = inline(user, 'client-key', 'user', userName);
  if ((cert === undefined) !== (key === undefined)) fail(`user ${userName}: a client certificate needs its key`);
  const tokenFile = str(user, 'tokenFile', 'user', userName);
  return {
    server: server.replace(/\/+$/, ''),
    ca: inline(cluster, 'certificate-authority', 'cluster', clusterName),
    tlsServerName: str(cluster, 'tls-server-name', 'cluster', clusterName),
    token: str(user, 'token', 'user', userName),
    tokenFile: tokenFile && (isAbsolute(tokenFile) ? tokenFile : join(base, tokenFile)),
    cert,
    key,
    impersonate: impersonation(user, String(userName), fail),
    source: path,
  };
}

function impersonation(user: Obj, name: string, fail: (m: string) => never): Impersonation | undefined {
  const as = user.as;
  if (as === undefined || as === null || as === '') return undefined;
  if (typeof as !== 'string') return fail(`users[${name}].user.as must be a string`);
  const groups = user['as-groups'] ?? [];
  if (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string'))
    return fail(`users[${name}].user.as-groups must be a list of strings`);
  const extra = user['as-user-extra'] ?? {};
  if (!isObj(extra) || Object.values(extra).some((v) => !Array.isArray(v) || v.some((s) => typeof s !== 'string')))
    return fail(`users[${name}].user.as-user-extra must map names to lists of strings`);
  return { user: as, groups: groups as string[], extra: extra as Record<string, string[]> };
}

function named(list: unknown, name: string, kind: string, fail: (m: string) => never): Obj {
  const entry = Array.isArray(list) ? list.find((e) => isObj(e) && e.name === name) : undefined;
  const body = isObj(entry) ? entry[kind] : undefined;
  return isObj(body) ? body : fail(`no ${kind} named ${name}`);
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new AccessError(`cannot read ${what} (${path}): ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}
