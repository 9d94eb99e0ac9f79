/**
 * Where a mount the injector did not write may go in a mesh container (Istio's sidecar.istio.io/userVolumeMount adds
 * such mounts to istio-proxy): never over what the proxy executes, links, or reads its configuration and identity
 * from. A mount replaces everything at and below its path, so a path is refused when it is, or contains, one of
 * those places.
 */
import { posix } from 'node:path';
import type { Problem } from './types.ts';

/** Trees whose contents decide what runs (binaries, libraries) or which configuration and identity the proxy uses. */
const PROTECTED_TREES = [
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/usr',
  '/etc/istio',
  '/etc/ssl',
  '/etc/pki',
  '/etc/certs',
  '/var/lib/istio',
  '/var/run/secrets',
  '/var/run/linkerd',
  '/proc',
  '/sys',
  '/dev',
];

/** Single files the dynamic loader and libc read on every exec or lookup. */
const PROTECTED_FILES = [
  '/etc/ld.so.preload',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/hosts',
  '/etc/resolv.conf',
];

/** Whether `path` is `tree` or below it. */
const within = (path: string, tree: string) => path === tree || path.startsWith(tree === '/' ? '/' : `${tree}/`);

/** Why a mount at `mountPath` could change what a mesh container runs or reads; undefined when it cannot. */
export function mountPathProblem(mountPath: string): Problem {
  if (!mountPath.startsWith('/')) return `${mountPath} is not an absolute path`;
  const path = posix.normalize(mountPath).replace(/\/+$/, '') || '/';
  if (path !== mountPath.replace(/\/+$/, '')) return `${mountPath} is not a normalised path`;
  for (const tree of PROTECTED_TREES) {
    if (within(path, tree)) return `${mountPath} is inside ${tree}, which decides what the container runs or trusts`;
    if (within(tree, path)) return `${mountPath} would cover ${tree}, which decides what the container runs or trusts`;
  }
  for (const file of PROTECTED_FILES)
    if (within(file, path)) return `${mountPath} would cover ${file}, which every program reads`;
  return undefined;
}
