/**
 * The CLI's large lists (Nodes, pods, Leases, Namespaces) as plain JSON, a page at a time and an item at a time:
 * with the kubeconfig's own credentials, as @kubernetes/client-node applies them (`applyToHTTPSOptions`:
 * certificates, tokens, exec and auth plugins, proxies), but without its typed models. Those models copy every object
 * of a page into class instances with Dates, and `meshgate check` at 15,000 Nodes and 150,000 pods held ~460 MiB
 * (issue 32); the facts are read by their shape either way (records.ts). Each item is parsed alone as its bytes
 * arrive (list-items.ts): a page is never held whole, parsed or not. A status other than 2xx is a KubeApiError
 * (src/kube/errors.ts), no answer a KubeTransportError; the caller (kube-reader.ts) words them.
 */
import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeTransportError } from '../kube/errors.ts';
import { apiError, readJson } from '../kube/api/response.ts';
import { type PageMeta, readItems } from '../kube/api/list-items.ts';

/**
 * node:http (a plain-HTTP apiserver, e.g. a proxy) through `process.getBuiltinModule`: an ESM import reads every
 * export, and its lazy WebSocket getters load Node's bundled undici (src/agent/http.ts; test/kube/daemon-imports).
 */
const { request: httpRequest } = process.getBuiltinModule('node:http');

/** The apiserver cuts a list at 60 s; a page that takes longer is not coming. */
const PAGE_TIMEOUT_MS = 60_000;

/** One page: its items handed to `each` as they arrive; resolves with the page's metadata (`continue`). */
function page(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | undefined>,
  each: (item: unknown) => void,
): Promise<PageMeta> {
  const server = kc.getCurrentCluster()?.server ?? '';
  const url = new URL(path, server);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const what = `GET ${url.pathname}`;
  return (async () => {
    const opts: RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
    await kc.applyToHTTPSOptions(opts);
    return new Promise<PageMeta>((resolve, reject) => {
      const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
      const req = send(url, { ...opts, agent: opts.agent as HttpAgent }, (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const done = () => clearTimeout(timer);
        if (status >= 200 && status < 300) readItems(res, what, each, done).then(resolve, reject);
        else
          readJson(res, 64 * 1024, what, done).then(
            (st) => reject(apiError(status, st, undefined)),
            () => reject(apiError(status, undefined, undefined)),
          );
      });
      const timer = setTimeout(
        () => req.destroy(new KubeTransportError(`${what}: no answer within ${PAGE_TIMEOUT_MS} ms`, true)),
        PAGE_TIMEOUT_MS,
      );
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err instanceof KubeTransportError ? err : new KubeTransportError(`${what}: ${err.message}`, true, err));
      });
      req.end();
    });
  })();
}

/** Every item of `path`, `limit` a page, following `continue`; `each` gets them one at a time as they arrive. */
export async function listItems<T>(
  kc: KubeConfig,
  path: string,
  limit: number,
  query: Record<string, string | undefined>,
  each: (item: T) => void,
): Promise<void> {
  let cont: string | undefined;
  do {
    const meta = await page(kc, path, { ...query, limit, continue: cont }, each as (item: unknown) => void);
    cont = meta.continue || undefined;
  } while (cont);
}
