// OCI image archives without a registry or a Docker engine: a root filesystem dir becomes one uncompressed tar
// layer, plus the image config, manifest, index.json and oci-layout, tarred into an archive that
// `ctr -n k8s.io images import` accepts (the name comes from the index's io.containerd.image.name annotation).
// Layers are tarred with sorted names, mtime 0 and uid/gid 0, so the same files always give the same digests and a
// second import of an unchanged image is a no-op for containerd. File capabilities (the security.capability xattr,
// which `setcap` writes) go into the layer as the PAX record SCHILY.xattr.security.capability, as in images built
// by Docker or BuildKit, and containerd's unpacker sets them again; other xattrs are left out (a file without any
// gives a byte-identical layer).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ImageConfig {
  entrypoint?: string[];
  cmd?: string[];
  /** "uid:gid" or "uid"; default root. */
  user?: string;
  env?: Record<string, string>;
  workingDir?: string;
}

export interface ImageSpec {
  /** Full reference, e.g. localhost/meshgate-e2e/pause:3.10.1 (pods use it with imagePullPolicy: Never). */
  ref: string;
  /** Directory whose contents become the image's root filesystem. */
  rootfs: string;
  config?: ImageConfig;
}

export interface BuiltImage {
  ref: string;
  archive: string;
  /** sha256:… of the manifest, what containerd reports as the image digest. */
  digest: string;
  bytes: number;
  /** True when a cached archive was reused instead of built (see images.ts). */
  reused?: boolean;
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Writes `<outDir>/<ref with / and : replaced>.oci.tar` for `spec` and returns where and what it is. */
export async function buildImage(spec: ImageSpec, outDir: string): Promise<BuiltImage> {
  const slug = spec.ref.replace(/[^a-zA-Z0-9.-]+/g, '_');
  const layout = join(outDir, `${slug}.layout`);
  rmSync(layout, { recursive: true, force: true });
  const blobs = join(layout, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true });

  const layerTmp = join(layout, 'layer.tar');
  execFileSync('tar', [
    '--sort=name',
    '--mtime=@0',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--format=posix',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    '--xattrs',
    '--xattrs-include=security.capability',
    '-C',
    spec.rootfs,
    '-cf',
    layerTmp,
    '.',
  ]);
  const layerDigest = await sha256File(layerTmp);
  const layerSize = statSync(layerTmp).size;
  renameSync(layerTmp, join(blobs, layerDigest));

  const blob = (obj: unknown) => {
    const text = JSON.stringify(obj);
    const digest = createHash('sha256').update(text).digest('hex');
    writeFileSync(join(blobs, digest), text);
    return { digest: `sha256:${digest}`, size: Buffer.byteLength(text) };
  };
  const c = spec.config ?? {};
  const config = blob({
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
    },
    rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
  });
  const manifest = blob({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: `sha256:${layerDigest}`, size: layerSize }],
  });
  const tag = spec.ref.slice(spec.ref.lastIndexOf(':') + 1);
  writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          platform: { architecture: 'amd64', os: 'linux' },
          annotations: { 'io.containerd.image.name': spec.ref, 'org.opencontainers.image.ref.name': tag },
        },
      ],
    }),
  );
  const archive = join(outDir, `${slug}.oci.tar`);
  execFileSync('tar', ['-C', layout, '-cf', archive, 'oci-layout', 'index.json', 'blobs']);
  rmSync(layout, { recursive: true, force: true });
  return { ref: spec.ref, archive, digest: manifest.digest, bytes: statSync(archive).size };
}
