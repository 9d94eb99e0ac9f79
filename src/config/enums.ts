/** The configuration's enumerations: plain lists, so the daemons read them without the schema library. */

export const REDIRECT_MODES = ['auto', 'required', 'off'] as const;
export const ON_UNVERIFIED_NODE = ['reject', 'validate'] as const;
export const NATIVE_SIDECAR_MODES = ['auto', 'on', 'off'] as const;
export const APP_PRIVILEGES = ['restricted', 'baseline'] as const;
/**
 * How much of what meshgate decides is enforced in a namespace (src/admission/level.ts): `enforce` refuses,
 * `warn` admits with an admission warning, `audit` admits and records. Ordered from the strictest.
 */
export const ENFORCEMENT_LEVELS = ['enforce', 'warn', 'audit'] as const;
