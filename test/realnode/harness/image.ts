// OCI image archives without a registry or a Docker engine: a root filesystem dir becomes one uncompressed tar
// layer of an OCI image layout (scripts/release-oci.ts, the writer of the release's own image), tarred into an
// archive that `ctr -n k8s.io images import` accepts (the name comes from the index's io.containerd.image.name
// annotation). The same files always give the same digests, so a second import of an unchanged image is a no-op for
// containerd; file capabilities (setcap) are carried in the layer. meshgate's own image is not made here: the tier
// pulls the release's image from a registry (harness/registry.ts).
import { execFileSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ImageConfig, tarLayer, writeImage } from '../../../scripts/release-oci.ts';

export type { ImageConfig };
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

/** Writes `<outDir>/<ref with / and : replaced>.oci.tar` for `spec` and returns where and what it is. */
export async function buildImage(spec: ImageSpec, outDir: string): Promise<BuiltImage> {
  const slug = spec.ref.replace(/[^a-zA-Z0-9.-]+/g, '_');
  const layout = join(outDir, `${slug}.layout`);
  rmSync(layout, { recursive: true, force: true });
  const layer = await tarLayer(spec.rootfs, layout, true);
  const { digest } = writeImage(layout, spec.ref, [layer], spec.config);
  const archive = join(outDir, `${slug}.oci.tar`);
  execFileSync('tar', ['-C', layout, '-cf', archive, 'oci-layout', 'index.json', 'blobs']);
  rmSync(layout, { recursive: true, force: true });
  return { ref: spec.ref, archive, digest, bytes: statSync(archive).size };
}
