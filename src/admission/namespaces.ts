/** Namespace labels as seen by a cache; undefined for a namespace the cache does not (yet) know. */
export interface NamespaceLabels {
  labels(namespace: string): Record<string, string> | undefined;
}
