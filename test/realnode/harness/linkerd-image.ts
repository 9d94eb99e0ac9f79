// The image Linkerd's injector renders as `<proxy.image.name>:<proxy.image.version>` on the real nodes, pointed
// here (harness/linkerd-mesh.ts). Like Linkerd's own proxy image it holds every program the injected containers
// run, at the paths the chart's partials name:
//   /usr/lib/linkerd/linkerd2-proxy              STAND-IN for the proxy (test/realnode/images/linkerd-proxy.c),
//                                                the entrypoint, as UID 2102
//   /usr/lib/linkerd/linkerd2-proxy-init         the REAL proxy-init (linkerd-init; scripts/build-linkerd.sh) with
//                                                this machine's iptables (nft and legacy) and extensions
//   /usr/lib/linkerd/linkerd2-network-validator  the REAL validator (CNI mode; scripts/build-linkerd-validator.sh)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync } from 'node:fs';
import { join, relative } from 'node:path';
import { findMeshBuild } from '../../meshbin/binaries.ts';
import type { BuiltImage } from './image.ts';
import {
  addIptables,
  baseFiles,
  cachedImage,
  IMAGE_PREFIX,
  imageCache,
  linkIptables,
  sharedLibraries,
  type Contents,
} from './images.ts';
import { LINKERD_PROXY_UID } from './linkerd-cni.ts';

/** proxy.image.name and proxy.image.version the tier gives Linkerd's chart. */
export const LINKERD_PROXY_REPO = `${IMAGE_PREFIX}/linkerd-proxy`;
export const LINKERD_PROXY_TAG = 'b24cd405-standin';
export const LINKERD_PROXY_REF = `${LINKERD_PROXY_REPO}:${LINKERD_PROXY_TAG}`;

const SOURCE = new URL('../images/linkerd-proxy.c', import.meta.url).pathname;
/** The header it shares with Istio's stand-in (proxy.c). */
const HEADER = new URL('../images/standin.h', import.meta.url).pathname;

/** The stand-in compiled (gcc -static -Os), cached by its sources' hash next to the image archives. */
function standInProxy(cacheDir: string): string {
  const key = createHash('sha256').update(readFileSync(SOURCE)).update(readFileSync(HEADER)).digest('hex').slice(0, 12);
  const out = join(cacheDir, `linkerd-proxy-standin-${key}`);
  if (existsSync(out)) return out;
  mkdirSync(cacheDir, { recursive: true });
  execFileSync('gcc', ['-static', '-Os', '-Wall', '-o', `${out}.tmp`, SOURCE], { stdio: ['ignore', 'ignore', 'pipe'] });
  renameSync(`${out}.tmp`, out);
  return out;
}

export function linkerdProxyImage(): Promise<BuiltImage> {
  const l5d = findMeshBuild('linkerd');
  const validator = findMeshBuild('linkerd-validator').bin('linkerd-network-validator');
  const contents: Contents = new Map([
    ['usr/lib/linkerd/linkerd2-proxy', standInProxy(imageCache())],
    ['usr/lib/linkerd/linkerd2-proxy-init', l5d.bin('linkerd2-proxy-init')],
    ['usr/lib/linkerd/linkerd2-network-validator', validator],
  ]);
  for (const lib of sharedLibraries(validator)) contents.set(relative('/', lib), realpathSync(lib));
  addIptables(contents);
  return cachedImage(
    LINKERD_PROXY_REF,
    contents,
    {
      entrypoint: ['/usr/lib/linkerd/linkerd2-proxy'],
      user: `${LINKERD_PROXY_UID}:${LINKERD_PROXY_UID}`,
      // proxy-init runs iptables-nft / iptables-legacy by name.
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
    },
    (root) => {
      baseFiles(root);
      linkIptables(root);
      mkdirSync(join(root, 'run'), { mode: 0o755 }); // iptables-legacy's /run/xtables.lock (linkerd-init mounts an emptyDir there)
      // As linkerd2-proxy-init's Dockerfile: linkerd-init runs as a non-root UID with NET_ADMIN and NET_RAW in its
      // bounding set, and these file capabilities give them to proxy-init and iptables after execve.
      for (const f of [
        'usr/sbin/xtables-legacy-multi',
        'usr/sbin/xtables-nft-multi',
        'usr/lib/linkerd/linkerd2-proxy-init',
      ])
        execFileSync('setcap', ['cap_net_raw,cap_net_admin+eip', join(root, f)]);
    },
  );
}
