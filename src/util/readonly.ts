/**
 * `DeepReadonly<T>`: the type of a value nothing may change, all the way down. The compiled configuration and the
 * containers built from it are shared by every review; this type (not a comment, not `Object.isFrozen`) is what
 * says so, and `deepFreeze` makes it true at run time.
 */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyArray<infer U>
    ? ReadonlyArray<DeepReadonly<U>>
    : T extends ReadonlyMap<infer K, infer V>
      ? ReadonlyMap<K, DeepReadonly<V>>
      : T extends ReadonlySet<infer U>
        ? ReadonlySet<U>
        : T extends object
          ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
          : T;
