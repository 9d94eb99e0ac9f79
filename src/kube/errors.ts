/** One line for an API error in messages: "404 NotFound: …" instead of client-node's multi-line dump with headers. */
import { errorFields, errorText } from '../log/fields.ts';

/** As errorText, and a non-API error with its type ("TypeError: …"). */
export function describeKubeError(err: unknown): string {
  const f = errorFields(err);
  return typeof f.code === 'number' ? errorText(err) : `${f.type}: ${f.message}`;
}
