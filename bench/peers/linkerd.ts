/**
 * Linkerd's own proxy injector as a peer of `npm run bench -- --peers` (linkerd2 b24cd40, built by
 * scripts/build-linkerd.sh; the linkerd-control-plane chart's values rendered by the harness,
 * test/e2e/harness/linkerd.ts), on the same corpus pods. It injects pods whose namespace (or the pod itself) says
 * linkerd.io/inject=enabled, reading namespaces from its informer cache: the corpus namespaces get that annotation
 * before it starts, as they would in a meshed cluster. Log level warn, GOMAXPROCS=1, pinned to the server CPU like
 * the other peers.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { ControlPlane } from '../../test/e2e/harness/index.ts';
import { startLinkerdInjector } from '../../test/e2e/harness/linkerd.ts';
import type { Review } from '../corpus.ts';
import { post } from '../preflight.ts';
import { SERVER_CPU } from '../procs.ts';
import type { Peer } from './peers.ts';
import { pinProcess } from './proc-stats.ts';

const SERVERNAME = 'linkerd-proxy-injector.linkerd.svc';

export async function linkerdPeer(cp: ControlPlane, reviews: Review[]): Promise<Peer & { injectedCount: number }> {
  const core = cp.kc.makeApiClient(CoreV1Api);
  for (const name of new Set(reviews.map((r) => r.request.namespace ?? 'default')))
    await core.patchNamespace(
      { name, body: { metadata: { annotations: { 'linkerd.io/inject': 'enabled' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  const l5d = await startLinkerdInjector(cp, {}, { logLevel: 'warn', env: { GOMAXPROCS: '1' } });
  try {
    pinProcess(l5d.pid, SERVER_CPU);
    const url = l5d.url.replace(/\/$/, '');
    let injectedCount = 0;
    for (const r of reviews) {
      const res = await post(url, cp.ca.certPem, '/', JSON.stringify(r), SERVERNAME);
      if (res.status !== 200)
        throw new Error(
          `Linkerd's injector answered HTTP ${res.status} for ${r.request.uid}: ${res.text.slice(0, 200)}`,
        );
      if ((JSON.parse(res.text) as { response?: { patch?: string } }).response?.patch) injectedCount++;
    }
    return {
      name: 'linkerd',
      what: "Linkerd's proxy injector (b24cd40), /",
      url,
      path: '/',
      ca: cp.ca.certPem,
      servername: SERVERNAME,
      pid: l5d.pid,
      reviews,
      bodies: reviews.map((r) => JSON.stringify(r)),
      injectedCount,
      stop: () => l5d.stop(),
    };
  } catch (err) {
    await l5d.stop();
    throw err;
  }
}
