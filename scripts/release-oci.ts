// OCI image layouts without a Docker engine or a registry (image-spec v1.1: oci-layout, index.json, blobs/sha256):
// each layer is a directory tarred by GNU tar with sorted names, mtime 0 and uid/gid 0, so the same files always
// give the same digests (a second push or import of an unchanged image moves nothing). File capabilities (the
// security.capability xattr that `setcap` writes) go into the layer as the PAX record
// SCHILY.xattr.security.capability, as in images built by Docker or BuildKit, and containerd's unpacker sets them
// again; other xattrs are left out. Layers are gzip-compressed (what registries and users expect) or left plain
// (the real-node tier's local archives, imported without a registry). Node's gzip writes mtime 0 and OS 3 in its
// header, so compression is deterministic too.
import { spawn } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import { createWriteStream, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

export const MEDIA = {
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  index: 'application/vnd.oci.image.index.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar',
  layerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

export interface Layer extends Descriptor {
  /** sha256 of the uncompressed tar: the config's rootfs.diff_ids entry. */
  diffId: string;
}

export interface ImageConfig {
  entrypoint?: string[];
  cmd?: string[];
  /** "uid:gid" or "uid"; default root. */
  user?: string;
  env?: Record<string, string>;
  workingDir?: string;
  labels?: Record<string, string>;
}

/** The GNU tar flags of a reproducible layer (see the top of this file). */
export const TAR_FLAGS = [
  '--sort=name',
  '--mtime=@0',
  '--owner=0',
  '--group=0',
  '--numeric-owner',
  '--format=posix',
  '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
  '--xattrs',
  '--xattrs-include=security.capability',
];

/** Hashes what flows through it. */
function hashing(hash: Hash): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
}

/** `<layout>/blobs/sha256`, created. */
export function blobsDir(layout: string): string {
  const dir = join(layout, 'blobs', 'sha256');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Tars the contents of `rootfs` into a layer blob of `layout` (gzip unless `plain`). */
export async function tarLayer(rootfs: string, layout: string, plain = false): Promise<Layer> {
  const blobs = blobsDir(layout);
  const tmp = join(blobs, `.layer-${process.pid}-${Date.now()}.tmp`);
  const tar = spawn('tar', [...TAR_FLAGS, '-C', rootfs, '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  tar.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => tar.on('close', resolve));
  const diff = createHash('sha256');
  const blob = createHash('sha256');
  await pipeline(
    tar.stdout,
    hashing(diff),
    plain ? new PassThrough() : createGzip({ level: 6 }),
    hashing(blob),
    createWriteStream(tmp),
  );
  const code = await exited;
  if (code !== 0) throw new Error(`tar -C ${rootfs} failed (exit ${code}): ${stderr.trim()}`);
  const digest = blob.digest('hex');
  renameSync(tmp, join(blobs, digest));
  return {
    mediaType: plain ? MEDIA.layer : MEDIA.layerGzip,
    digest: `sha256:${digest}`,
    size: statSync(join(blobs, digest)).size,
    diffId: `sha256:${diff.digest('hex')}`,
  };
}

/** Writes a JSON blob into the layout; returns its descriptor. */
export function jsonBlob(layout: string, mediaType: string, obj: unknown): Descriptor {
  const text = JSON.stringify(obj);
  const digest = createHash('sha256').update(text).digest('hex');
  writeFileSync(join(blobsDir(layout), digest), text);
  return { mediaType, digest: `sha256:${digest}`, size: Buffer.byteLength(text) };
}

export interface WrittenImage {
  ref: string;
  /** The manifest's digest: what a registry and containerd report as the image digest. */
  digest: string;
  /** Config, manifest and layers: what a registry stores (compressed layers). */
  bytes: number;
}

/**
 * Writes the config, the manifest and index.json of a linux/amd64 image whose layer blobs `layers` are already in
 * `layout`, named `ref` (index annotations: the tag as org.opencontainers.image.ref.name, which `crane push` and
 * skopeo read, and the whole reference as io.containerd.image.name, which `ctr images import` names it by).
 */
export function writeImage(layout: string, ref: string, layers: Layer[], c: ImageConfig = {}): WrittenImage {
  const config = jsonBlob(layout, MEDIA.config, {
    architecture: 'amd64',
    os: 'linux',
    config: {
      Entrypoint: c.entrypoint,
      Cmd: c.cmd,
      User: c.user,
      Env: Object.entries({ PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', ...c.env }).map(
        ([k, v]) => `${k}=${v}`,
      ),
      WorkingDir: c.workingDir,
      Labels: c.labels,
    },
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
  });
  const manifest = jsonBlob(layout, MEDIA.manifest, {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config,
    layers: layers.map(({ mediaType, digest, size }) => ({ mediaType, digest, size })),
  });
  const tag = ref.slice(ref.lastIndexOf(':') + 1);
  writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: [
        {
          ...manifest,
          platform: { architecture: 'amd64', os: 'linux' },
          annotations: { 'io.containerd.image.name': ref, 'org.opencontainers.image.ref.name': tag },
        },
      ],
    }),
  );
  const bytes = config.size + manifest.size + layers.reduce((n, l) => n + l.size, 0);
  return { ref, digest: manifest.digest, bytes };
}
