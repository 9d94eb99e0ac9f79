/** Reading an apiserver's answer: the whole body as JSON within a byte bound, and an error status as a KubeApiError. */
import type { IncomingMessage } from 'node:http';
import { KubeApiError, KubeTransportError } from '../errors.ts';

/** The Status object the apiserver sends with an error (reason and message), else the bare HTTP status. */
export function apiError(status: number, st: unknown, retryAfter: number | undefined): KubeApiError {
  const s = (st ?? {}) as { reason?: unknown; message?: unknown };
  const reason = typeof s.reason === 'string' ? s.reason : '';
  const message = typeof s.message === 'string' ? s.message : '';
  return new KubeApiError(status, reason, message, retryAfter);
}

/** The whole body, parsed, failing once it exceeds `maxBytes`; `done` runs when it ends either way. */
export function readJson(res: IncomingMessage, maxBytes: number, what: string, done: () => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        done();
        res.destroy();
        reject(new Error(`${what}: the answer exceeds ${maxBytes} bytes`));
      } else chunks.push(c);
    });
    res.on('error', (err) => {
      done();
      reject(new KubeTransportError(`${what}: ${err.message}`, true, err));
    });
    res.on('end', () => {
      done();
      try {
        resolve(size === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (err) {
        reject(new Error(`${what}: the answer is not JSON: ${(err as Error).message}`));
      }
    });
  });
}
