/** meshgate's ambient validator: its own validator template run with --ambient (validate-redirect --ambient). */

/** Whether a validator container is meshgate's ambient one (identify.ts already checked it is the template). */
export function isAmbientValidator(c: { readonly args?: readonly string[] } | undefined): boolean {
  return c?.args?.[0] === '--ambient';
}
