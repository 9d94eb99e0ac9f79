/** One line for an API error in logs: "404 NotFound: …" instead of client-node's multi-line dump with headers. */
import { ApiException } from '@kubernetes/client-node';

export function describeKubeError(err: unknown): string {
  if (err instanceof ApiException) {
    try {
      const status = JSON.parse(String(err.body)) as { reason?: string; message?: string };
      return `${err.code} ${status.reason ?? ''}: ${status.message ?? ''}`.trim();
    } catch {
      return `${err.code}: ${String(err.body).slice(0, 200)}`;
    }
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
