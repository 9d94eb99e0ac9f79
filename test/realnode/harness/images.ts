// The images real nodes run, built locally (no registry here) and imported into each node's containerd:
//   localhost/meshgate-e2e/pause:<v>   kubernetes' pause.c, static: the sandbox image (the real thing, rebuilt)
//   localhost/meshgate-e2e/proxyv2:<t> STAND-IN for Istio's proxyv2: test/realnode/images/proxy.c as pilot-agent
//                                      (listens on the proxy's ports for `proxy sidecar`), and for `istio-iptables`
//                                      the REAL istio-iptables of Istio 1.27.0 with Debian's iptables binaries
//   localhost/meshgate-e2e/become-proxy:1  scenario S9's app (test/realnode/images/become-proxy.c), its entrypoint
//                                      carrying the file capability cap_setuid,cap_setgid+p (setcap on the rootfs)
// Archives are cached under ${MESHGATE_CACHE}/realnode-images, keyed by what went into them, so an unchanged tree
// reuses them.
// meshgate itself is not imported: it is the release's image (scripts/release-image.ts), named as the chart names it
// by default (MESHGATE_REF, e.g. ghcr.io/meshgate/meshgate:0.1.0), pushed to a registry in the run's namespace and
// pulled from there by the kubelets (harness/registry.ts).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../e2e/harness/binaries.ts';
import { cacheRoot } from '../../support/build-cache.ts';
import { keepNewest, sharedLibraries } from '../../../scripts/release-image.ts';
import { group, NONROOT, NONROOT_UID, passwd, ROOT } from '../../../scripts/image-users.ts';
import { chartRelease } from '../../../src/util/release-info.ts';
import { buildImage, type BuiltImage, type ImageConfig } from './image.ts';
import type { RealNodeBinaries } from './binaries.ts';

export const IMAGE_PREFIX = 'localhost/meshgate-e2e';
export const pauseRef = (version: string) => `${IMAGE_PREFIX}/pause:${version}`;
/** Istio's injector renders `<hub>/proxyv2:<tag>`; the tier gives it this hub and tag (harness/mesh.ts). */
export const PROXYV2_HUB = IMAGE_PREFIX;
export const PROXYV2_TAG = '1.27.0-standin';
export const PROXY_REF = `${PROXYV2_HUB}/proxyv2:${PROXYV2_TAG}`;
/** meshgate's image as the chart names it by default: what the release step builds and the kubelets pull. */
export const MESHGATE_REF = chartRelease(
  parse(readFileSync(join(repoRoot, 'charts/meshgate/Chart.yaml'), 'utf8')),
  parse(readFileSync(join(repoRoot, 'charts/meshgate/values.yaml'), 'utf8')),
).image;
export const BECOME_PROXY_REF = `${IMAGE_PREFIX}/become-proxy:1`;
/**
 * The file capability on S9's entrypoint: permitted only, no effective bit, so the binary still starts when the
 * container drops them (with the effective bit the kernel refuses the execve of a file whose permitted
 * capabilities it cannot all grant) and raises them itself, as a capability-aware program does.
 */
export const BECOME_PROXY_FILE_CAPS = 'cap_setuid,cap_setgid+p';
/** The stand-in proxy's user, like Istio's proxy (istio-cni exempts this uid from redirection). */
export const PROXY_UID = 1337;
/** The distroless :nonroot user the Dockerfile runs as. */
export { NONROOT_UID };
/** The pause image's user, as Kubernetes' own pause image (build/pause/Dockerfile: USER 65535:65535). */
export const PAUSE_UID = 65535;

export const imageCache = () => join(cacheRoot(), 'realnode-images');

/** Files that go into a rootfs: destination path in the image → source file or dir on this machine. */
export type Contents = Map<string, string>;

/**
 * Builds (or reuses) the archive for `ref` from `contents`. The key hashes every source's path, size and mtime plus
 * the config, so edits rebuild and an unchanged tree costs only the stat calls.
 */
export async function cachedImage(
  ref: string,
  contents: Contents,
  config: ImageConfig,
  extra: (root: string) => void = () => {},
): Promise<BuiltImage> {
  const hash = createHash('sha256')
    .update(ref)
    .update(JSON.stringify(config))
    .update(readFileSync(new URL(import.meta.url)));
  const walk = (p: string): void => {
    const st = statSync(p);
    hash.update(`${p}\0${st.size}\0${st.mtimeMs}\0${st.mode}\n`);
    if (st.isDirectory()) for (const e of readdirSync(p).sort()) walk(join(p, e));
  };
  for (const [dest, src] of [...contents].sort()) {
    hash.update(dest);
    walk(src);
  }
  const key = hash.digest('hex').slice(0, 12);
  const dir = imageCache();
  const slug = ref.replace(/[^a-zA-Z0-9.-]+/g, '_');
  const archive = join(dir, `${slug}-${key}.oci.tar`);
  const meta = `${archive}.json`;
  if (existsSync(archive) && existsSync(meta))
    return { ...(JSON.parse(readFileSync(meta, 'utf8')) as BuiltImage), reused: true };

  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(dir, '.build-'));
  try {
    const root = join(work, 'rootfs');
    mkdirSync(root, { mode: 0o755 });
    for (const [dest, src] of contents) {
      const target = join(root, dest);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(src, target, { recursive: true, dereference: true });
    }
    extra(root);
    const built = await buildImage({ ref, rootfs: root, config }, work);
    renameSync(built.archive, archive);
    const result = { ...built, archive, reused: false };
    writeFileSync(meta, JSON.stringify(result));
    // Old archives of the same image (other trees may use them): keep the newest 3, each with its metadata.
    keepNewest(dir, (f) => f.startsWith(`${slug}-`) && f.endsWith('.oci.tar'), '.json');
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** /etc/passwd and /etc/group with root, the proxy's 1337 and distroless' nonroot 65532; /tmp world-writable. */
export function baseFiles(root: string): void {
  mkdirSync(join(root, 'etc'), { recursive: true });
  const users = [ROOT, { name: 'istio-proxy', uid: PROXY_UID, gecos: '', home: '/' }, NONROOT];
  writeFileSync(join(root, 'etc/passwd'), passwd(users));
  writeFileSync(join(root, 'etc/group'), group(users));
  mkdirSync(join(root, 'tmp'));
  chmodSync(join(root, 'tmp'), 0o1777);
  mkdirSync(join(root, 'home/nonroot'), { recursive: true });
}

export function pauseImage(bins: RealNodeBinaries): Promise<BuiltImage> {
  return cachedImage(pauseRef(bins.pauseVersion), new Map([['pause', bins.pause]]), {
    entrypoint: ['/pause'],
    user: `${PAUSE_UID}:${PAUSE_UID}`,
  });
}

/**
 * S9's app: tries setgid/setuid(1337), then the probe connection, and reports. No USER: every pod says who it runs
 * as. `setcap` (libcap2-bin) writes the file capability into the rootfs, and image.ts carries it into the layer.
 */
export function becomeProxyImage(bins: RealNodeBinaries): Promise<BuiltImage> {
  const entry = 'usr/local/bin/become-proxy';
  return cachedImage(BECOME_PROXY_REF, new Map([[entry, bins.becomeProxy]]), { entrypoint: [`/${entry}`] }, (root) => {
    baseFiles(root);
    execFileSync('setcap', [BECOME_PROXY_FILE_CAPS, join(root, entry)]);
  });
}

/** Where Debian's iptables keeps its extensions (compiled into libxtables as XTABLES_LIBDIR). */
export const XTABLES_LIBDIR = '/usr/lib/x86_64-linux-gnu/xtables';
/** The two iptables multi-binaries and the names istio-iptables runs (it probes legacy, then nft, then plain). */
export const XTABLES = {
  'xtables-nft-multi': [
    'iptables',
    'iptables-save',
    'iptables-restore',
    'iptables-nft',
    'iptables-nft-save',
    'iptables-nft-restore',
    'ip6tables',
    'ip6tables-save',
    'ip6tables-restore',
    'ip6tables-nft',
    'ip6tables-nft-save',
    'ip6tables-nft-restore',
  ],
  'xtables-legacy-multi': [
    'iptables-legacy',
    'iptables-legacy-save',
    'iptables-legacy-restore',
    'ip6tables-legacy',
    'ip6tables-legacy-save',
    'ip6tables-legacy-restore',
  ],
} as const;

/**
 * This machine's iptables in an image's contents (Debian's 1.8.9, nft default like the host's alternatives): both
 * multi-binaries, the shared libraries ldd lists, every extension module (-m owner, -j REDIRECT, … are dlopen()ed)
 * and /etc/protocols. linkIptables lays out the names they are run by.
 */
export function addIptables(contents: Contents): void {
  for (const multi of Object.keys(XTABLES)) {
    const bin = join('/usr/sbin', multi);
    contents.set(relative('/', bin), realpathSync(bin));
    for (const lib of sharedLibraries(bin)) contents.set(relative('/', lib), realpathSync(lib));
  }
  contents.set(relative('/', XTABLES_LIBDIR), XTABLES_LIBDIR);
  if (existsSync('/etc/protocols')) contents.set('etc/protocols', '/etc/protocols');
}

/** Every name of XTABLES, a link in the image's /usr/sbin to its multi-binary. */
export function linkIptables(root: string): void {
  for (const [multi, names] of Object.entries(XTABLES))
    for (const n of names) symlinkSync(multi, join(root, 'usr/sbin', n));
}

/**
 * The stand-in for Istio's proxyv2 (`<hub>/proxyv2:<tag>`): entrypoint /usr/local/bin/pilot-agent is proxy.c, which
 * listens on the proxy's ports for `proxy sidecar …` and exec()s the real istio-iptables for `istio-iptables …`
 * (istio-init). iptables comes from this machine (Debian's 1.8.9, nft default like the host's alternatives), with
 * the shared libraries ldd lists and every extension module (-m owner, -j REDIRECT, … are dlopen()ed).
 */
export function proxyImage(bins: RealNodeBinaries): Promise<BuiltImage> {
  const contents: Contents = new Map([
    ['usr/local/bin/pilot-agent', bins.proxy],
    ['usr/local/bin/istio-iptables', bins.istioIptables],
  ]);
  addIptables(contents);
  return cachedImage(
    PROXY_REF,
    contents,
    { entrypoint: ['/usr/local/bin/pilot-agent'], user: `${PROXY_UID}:${PROXY_UID}` },
    (root) => {
      baseFiles(root);
      linkIptables(root);
      mkdirSync(join(root, 'run'), { mode: 0o755 }); // iptables-legacy takes /run/xtables.lock
    },
  );
}

export { sharedLibraries };
