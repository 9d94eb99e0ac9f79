/**
 * The daemons' Kubernetes client: JSON over HTTPS (node:https, one keep-alive agent) with only what the webhook, the
 * node agent and the repair controller call — get, list by pages, watch, create, update, patch, delete. It replaces
 * @kubernetes/client-node in the daemons, which was 42–48 MiB of each one's RSS (`npm run bench -- --footprint`,
 * docs/benchmarks.md §8). node:https is part of every daemon anyway; Node's fetch held 20 MiB more for the same
 * requests (undici and its WebAssembly parser) and takes no CA or client certificate without the undici package.
 * - TLS: always verified, against the access's CA (or the system roots); a client certificate when given.
 * - Credentials: a bearer token, re-read from its file at most TOKEN_MAX_AGE_MS old and at once after a 401 (a
 *   projected service-account token rotates hourly), or the client certificate; impersonation headers if asked.
 * - Time: each attempt has REQUEST_TIMEOUT_MS from start to last byte, and CONNECT_TIMEOUT_MS to a TLS connection.
 * - Retries: retry.ts decides (429 with Retry-After, 5xx, connection failures; writes only where safe).
 * - Size: an answer larger than `maxBytes` (MAX_RESPONSE_BYTES by default) is cut and fails; lists come in pages.
 * Watches are in watch.ts, on the same connection pool and credentials.
 */
import { Agent, request, type RequestOptions as HttpsOptions } from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { KubeApiError, KubeTransportError } from '../errors.ts';
import { apiError, readJson } from './response.ts';
import { type PageMeta, readItems } from './list-items.ts';
import type { ClusterAccess } from './access.ts';
import { MAX_ATTEMPTS, parseRetryAfter, retryDelay, type Method } from './retry.ts';

/** The apiserver itself cuts a non-watch request at 60 s (--request-timeout); half of it bounds a daemon's wait. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Go's TLS handshake timeout in client-go's transport. */
export const CONNECT_TIMEOUT_MS = 10_000;
/**
 * The largest answer read: a list page of LIST_PAGE objects (src/kube/reflector.ts: 500) at ~100 KiB each, the
 * size of a large Node with many images. A larger answer means objects far above that, or not an apiserver.
 */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** client-go re-reads a token file once a minute; the kubelet renews a projected token at 80 % of its life. */
export const TOKEN_MAX_AGE_MS = 60_000;

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';
const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

export type Query = Record<string, string | number | boolean | undefined>;

export interface CallOptions {
  query?: Query;
  /** Statuses that are this call's answer and must not be retried (an eviction's 429). */
  answers?: readonly number[];
  maxBytes?: number;
  /** Per attempt, over the client's REQUEST_TIMEOUT_MS: a call someone is waiting on (an admission review). */
  timeoutMs?: number;
  /** Over the client's MAX_ATTEMPTS. */
  attempts?: number;
}

export interface ClientOptions {
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  maxAttempts?: number;
  /** Tests: a deterministic clock for backoff. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface ListPage<T> {
  items: T[];
  metadata?: { resourceVersion?: string; continue?: string };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class KubeClient {
  readonly server: string;
  readonly #access: ClusterAccess;
  readonly #agent: Agent;
  readonly #o: Required<ClientOptions>;
  #token?: { value: string; readAt: number };

  constructor(access: ClusterAccess, options: ClientOptions = {}) {
    this.server = access.server;
    this.#access = access;
    this.#o = {
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      maxAttempts: MAX_ATTEMPTS,
      sleep,
      random: Math.random,
      ...options,
    };
    this.#agent = new Agent({
      keepAlive: true,
      ca: access.ca,
      cert: access.cert,
      key: access.key,
      servername: access.tlsServerName,
      rejectUnauthorized: true,
    });
  }

  get<T>(path: string, o?: CallOptions): Promise<T> {
    return this.#call<T>('GET', path, undefined, o);
  }
  create<T>(path: string, body: unknown, o?: CallOptions): Promise<T> {
    return this.#call<T>('POST', path, { body }, o);
  }
  /** PUT: the whole object; with metadata.resourceVersion set, a concurrent change makes it fail with 409. */
  update<T>(path: string, body: unknown, o?: CallOptions): Promise<T> {
    return this.#call<T>('PUT', path, { body }, o);
  }
  patch<T>(path: string, type: PatchType, body: unknown, o?: CallOptions): Promise<T> {
    return this.#call<T>('PATCH', path, { body, contentType: PATCH_CONTENT_TYPE[type] }, o);
  }
  delete<T>(path: string, body?: unknown, o?: CallOptions): Promise<T> {
    return this.#call<T>('DELETE', path, body === undefined ? undefined : { body }, o);
  }

  /** Every page of a list, `limit` items at a time, following `continue`. */
  async *pages<T>(path: string, limit: number, query: Query = {}): AsyncGenerator<ListPage<T>> {
    let cont: string | undefined;
    do {
      const page = await this.get<ListPage<T>>(path, { query: { ...query, limit, continue: cont } });
      yield page;
      cont = page.metadata?.continue || undefined;
    } while (cont);
  }

  /**
   * Every item of a list, `limit` a page, each parsed alone as its bytes arrive (list-items.ts): a page is never
   * held whole, parsed or not (a 500-pod page parsed at once is promoted out of V8's young generation and grows the
   * heap, issue 32). A page's request is retried as `get` retries it only while none of its items has been handed
   * over; a failure after that ends the list (the caller lists again). Resolves with the list's resourceVersion.
   */
  async listItems<T>(
    path: string,
    limit: number,
    query: Query,
    each: (item: T) => void,
  ): Promise<{ resourceVersion?: string }> {
    let cont: string | undefined;
    let resourceVersion: string | undefined;
    do {
      const meta = await this.#page(path, { ...query, limit, continue: cont }, each as (item: unknown) => void);
      resourceVersion = meta.resourceVersion ?? resourceVersion;
      cont = meta.continue || undefined;
    } while (cont);
    return { resourceVersion };
  }

  async #page(path: string, query: Query, each: (item: unknown) => void): Promise<PageMeta> {
    const policy = { maxAttempts: this.#o.maxAttempts };
    let handed = 0;
    const counted = (item: unknown) => {
      handed++;
      each(item);
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.open('GET', path, query, { timeoutMs: this.#o.requestTimeoutMs });
        return await readItems(res.response, `GET ${path}`, counted, res.done);
      } catch (err) {
        const wait = handed === 0 ? retryDelay('GET', err, attempt, policy, this.#o.random) : undefined;
        if (wait === undefined) throw err;
        await this.#o.sleep(wait);
      }
    }
  }

  /** Closes idle keep-alive connections (stop). */
  close(): void {
    this.#agent.destroy();
  }

  async #call<T>(
    method: Method,
    path: string,
    send: { body: unknown; contentType?: string } | undefined,
    o: CallOptions = {},
  ): Promise<T> {
    const body = send === undefined ? undefined : JSON.stringify(send.body);
    const policy = { maxAttempts: o.attempts ?? this.#o.maxAttempts, answers: o.answers };
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.open(method, path, o.query, {
          body,
          contentType: send?.contentType,
          timeoutMs: o.timeoutMs ?? this.#o.requestTimeoutMs,
        });
        return (await readJson(res.response, o.maxBytes ?? MAX_RESPONSE_BYTES, `${method} ${path}`, res.done)) as T;
      } catch (err) {
        // A rotated token: read the file again now and retry once, whatever the attempt count.
        if (err instanceof KubeApiError && err.code === 401 && this.#access.tokenFile && !refreshed) {
          refreshed = true;
          this.#token = undefined;
          attempt--;
          continue;
        }
        const wait = retryDelay(method, err, attempt, policy, this.#o.random);
        if (wait === undefined) throw err;
        await this.#o.sleep(wait);
      }
    }
  }

  /**
   * One request, resolved when the answer's headers arrive (status 2xx) or rejected with a KubeApiError (the
   * apiserver's Status read from the body) or KubeTransportError. `timeoutMs` bounds the whole exchange;
   * `idleMs` instead bounds silence (watches). `done()` clears the timers once the caller has read the body.
   */
  open(
    method: Method,
    path: string,
    query: Query | undefined,
    o: { body?: string; contentType?: string; timeoutMs?: number; idleMs?: number; signal?: AbortSignal },
  ): Promise<{ response: IncomingMessage; request: ClientRequest; done: () => void }> {
    const url = new URL(path, this.server);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string | string[]> = { Accept: 'application/json', 'User-Agent': 'meshgate' };
    const token = this.#bearer();
    if (token) headers.Authorization = `Bearer ${token}`;
    const imp = this.#access.impersonate;
    if (imp) {
      headers['Impersonate-User'] = imp.user;
      if (imp.groups.length) headers['Impersonate-Group'] = imp.groups;
      for (const [k, v] of Object.entries(imp.extra)) headers[`Impersonate-Extra-${encodeURIComponent(k)}`] = v;
    }
    if (o.body !== undefined) {
      headers['Content-Type'] = o.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(o.body));
    }
    const what = `${method} ${url.pathname}`;
    return new Promise((resolve, reject) => {
      let sent = false;
      const opts: HttpsOptions = { method, headers, agent: this.#agent, signal: o.signal };
      const req = request(url, opts);
      const fail = (msg: string, cause?: unknown) =>
        req.destroy(new KubeTransportError(`${what}: ${msg}`, sent, cause));
      const deadline = o.timeoutMs && setTimeout(() => fail(`no answer within ${o.timeoutMs} ms`), o.timeoutMs);
      const connect = setTimeout(
        () => !sent && fail(`no connection within ${this.#o.connectTimeoutMs} ms`),
        this.#o.connectTimeoutMs,
      );
      const done = () => {
        clearTimeout(deadline);
        clearTimeout(connect);
      };
      if (o.idleMs) req.setTimeout(o.idleMs, () => fail(`silent for ${o.idleMs} ms`));
      req.on('socket', (socket) => {
        const tls = socket as TLSSocket;
        if (!tls.connecting) sent = true;
        else tls.once('secureConnect', () => (sent = true));
      });
      req.on('error', (err) => {
        done();
        reject(err instanceof KubeTransportError ? err : new KubeTransportError(`${what}: ${err.message}`, sent, err));
      });
      req.on('response', (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve({ response, request: req, done });
        const retryAfter = parseRetryAfter(response.headers['retry-after'] as string | undefined);
        readJson(response, 64 * 1024, what, done).then(
          (st) => reject(apiError(status, st, retryAfter)),
          () => reject(apiError(status, undefined, retryAfter)),
        );
      });
      req.end(o.body);
    });
  }

  #bearer(): string | undefined {
    const a = this.#access;
    if (!a.tokenFile) return a.token;
    const now = Date.now();
    if (!this.#token || now - this.#token.readAt > TOKEN_MAX_AGE_MS) {
      try {
        this.#token = { value: readFileSync(a.tokenFile, 'utf8').trim(), readAt: now };
      } catch (err) {
        // Keep the last token while the file is being replaced; without one, the apiserver answers 401.
        if (!this.#token) throw new KubeTransportError(`cannot read the token file ${a.tokenFile}`, false, err);
      }
    }
    return this.#token?.value;
  }
}
