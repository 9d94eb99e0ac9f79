/**
 * Container image references reduced to their repository, the way registries and runtimes resolve them, so
 * `istio/proxyv2:1.27.0`, `docker.io/istio/proxyv2@sha256:…` and `index.docker.io/istio/proxyv2` compare equal.
 * Judging a container by its repository (not its tag) lets a mesh upgrade without touching meshgate's config.
 */

/** `[registry/]path[:tag][@digest]` → `registry/path`, with Docker Hub's implicit `docker.io` and `library/`. */
export function imageRepository(image: string): string {
  let ref = image.trim();
  const at = ref.indexOf('@');
  if (at >= 0) ref = ref.slice(0, at);
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (colon > slash) ref = ref.slice(0, colon);
  const parts = ref.split('/');
  const first = parts[0];
  const hasRegistry = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasRegistry) return parts.length === 1 ? `docker.io/library/${ref}` : `docker.io/${ref}`;
  if (first === 'index.docker.io' || first === 'registry-1.docker.io') return `docker.io/${parts.slice(1).join('/')}`;
  return `${first.toLowerCase()}/${parts.slice(1).join('/')}`;
}

/** Whether `image` belongs to one of the repositories (each written in any of the accepted spellings). */
export function fromRepositories(image: string | undefined, repositories: readonly string[]): boolean {
  if (!image) return false;
  return normalised(repositories).has(imageRepository(image));
}

/** The configured repositories reduced once per list (the compiled config's lists live as long as it does). */
const reduced = new WeakMap<readonly string[], ReadonlySet<string>>();
function normalised(repositories: readonly string[]): ReadonlySet<string> {
  let set = reduced.get(repositories);
  if (!set) {
    set = new Set(repositories.map(imageRepository));
    reduced.set(repositories, set);
  }
  return set;
}
