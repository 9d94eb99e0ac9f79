/**
 * A small language for declaring the shape of JSON that meshgate reads (the pod, contract/pod.ts), so that the shape
 * is written once: the TypeScript types are inferred from the declaration (`Infer`), and the parser that checks a
 * value against it walks the same declaration (src/pod/parse.ts). Data only, no logic: the contract floor imports
 * nothing.
 *
 * A mapping lists the fields meshgate reads, each required or `optional`, in the order they are checked; `open`
 * mappings keep every other field a pod may carry, typed `unknown` (an admission patch must not lose them).
 */

export type Shape =
  | { readonly kind: 'string' }
  | { readonly kind: 'nonEmptyString' }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'integer' }
  | { readonly kind: 'stringMap' }
  | { readonly kind: 'list'; readonly item: Shape }
  | Mapping;

export interface Mapping {
  readonly kind: 'mapping';
  readonly fields: Readonly<Record<string, Field>>;
  /** Other fields are kept (typed unknown); a closed mapping's type has only its fields. */
  readonly open: boolean;
  /** What a value of the wrong kind should have been, in messages; default "a mapping". */
  readonly what?: string;
}

export interface Optional<S extends Shape = Shape> {
  readonly optional: S;
}
export type Field = Shape | Optional;

export const string = { kind: 'string' } as const;
export const nonEmptyString = { kind: 'nonEmptyString' } as const;
export const boolean = { kind: 'boolean' } as const;
export const integer = { kind: 'integer' } as const;
/** labels and annotations: every value a string. */
export const stringMap = { kind: 'stringMap' } as const;
export const list = <const S extends Shape>(item: S) => ({ kind: 'list', item }) as const;
export const optional = <const S extends Shape>(shape: S): Optional<S> => ({ optional: shape });
/** A mapping that keeps the fields it does not list. */
export const open = <const F extends Record<string, Field>>(fields: F, what?: string) =>
  ({ kind: 'mapping', fields, open: true, ...(what === undefined ? {} : { what }) }) as const;
/** A mapping whose type has only the fields it lists. */
export const closed = <const F extends Record<string, Field>>(fields: F) =>
  ({ kind: 'mapping', fields, open: false }) as const;

type Flat<T> = { -readonly [K in keyof T]: T[K] };
type FieldsOf<F> = Flat<
  { [K in keyof F as F[K] extends Optional ? never : K]: Infer<F[K]> } & {
    [K in keyof F as F[K] extends Optional ? K : never]?: F[K] extends Optional<infer S> ? Infer<S> : never;
  }
>;

/** The TypeScript type of values that pass a declaration's checks. */
export type Infer<S> = S extends { kind: 'string' | 'nonEmptyString' }
  ? string
  : S extends { kind: 'boolean' }
    ? boolean
    : S extends { kind: 'integer' }
      ? number
      : S extends { kind: 'stringMap' }
        ? Record<string, string>
        : S extends { kind: 'list'; item: infer I }
          ? Infer<I>[]
          : S extends { kind: 'mapping'; fields: infer F; open: true }
            ? FieldsOf<F> & { [key: string]: unknown }
            : S extends { kind: 'mapping'; fields: infer F }
              ? FieldsOf<F>
              : never;
