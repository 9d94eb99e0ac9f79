/**
 * One watch request: `GET path?watch=true&resourceVersion=…&allowWatchBookmarks=true&timeoutSeconds=…`, its
 * newline-delimited events handed over one by one. It ends when the apiserver closes it (its timeoutSeconds, a
 * restart) — resolved — or fails (a non-200 answer such as 410 Gone, a broken connection, an event over
 * MAX_EVENT_BYTES, silence past the timeout plus IDLE_GRACE_MS) — rejected. Resuming from the last resourceVersion
 * and relisting after a 410 are the reflector's job (src/kube/reflector.ts), which calls this again.
 */
import { StringDecoder } from 'node:string_decoder';
import type { KubeClient, Query } from './client.ts';
import { KubeTransportError } from '../errors.ts';
import { MAX_ITEM_BYTES } from './list-items.ts';

/** One event carries one object: the bound of one listed item (list-items.ts) holds for it too. */
export const MAX_EVENT_BYTES = MAX_ITEM_BYTES;
/** client-go asks for 5–10 min (random, so that watches of many clients do not end together). */
export const MIN_WATCH_SECONDS = 300;
/**
 * The apiserver writes nothing to a quiet watch until its timeout; silence beyond timeout + this means the connection
 * is dead without a reset (a vanished peer), so the watch fails and is resumed.
 */
export const IDLE_GRACE_MS = 60_000;

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface WatchOptions {
  query?: Query;
  signal?: AbortSignal;
  /** Tests: a shorter server-side timeout. */
  timeoutSeconds?: number;
  maxEventBytes?: number;
}

export async function watch<T>(
  client: KubeClient,
  path: string,
  onEvent: (e: WatchEvent<T>) => void,
  o: WatchOptions = {},
): Promise<void> {
  const timeoutSeconds = o.timeoutSeconds ?? Math.round(MIN_WATCH_SECONDS * (1 + Math.random()));
  const query = { ...o.query, watch: true, allowWatchBookmarks: true, timeoutSeconds };
  const { response, done } = await client.open('GET', path, query, {
    idleMs: timeoutSeconds * 1000 + IDLE_GRACE_MS,
    signal: o.signal,
  });
  try {
    await readEvents(response, onEvent, o.maxEventBytes ?? MAX_EVENT_BYTES, `watch ${path}`);
  } finally {
    done();
  }
}

/** Splits a stream into lines, each one JSON event; fails on a line over `maxBytes` characters or one that is not an event. */
export function readEvents<T>(
  stream: NodeJS.ReadableStream & { destroy(err?: Error): void },
  onEvent: (e: WatchEvent<T>) => void,
  maxBytes: number,
  what: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    let line = '';
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      stream.destroy();
      reject(err);
    };
    const emit = (text: string) => {
      if (!text.trim()) return;
      let e: WatchEvent<T>;
      try {
        e = JSON.parse(text) as WatchEvent<T>;
      } catch (err) {
        return fail(new Error(`${what}: an event is not JSON: ${(err as Error).message}`));
      }
      if (typeof e?.type !== 'string' || typeof e.object !== 'object' || e.object === null)
        return fail(new Error(`${what}: not a watch event: ${text.slice(0, 200)}`));
      onEvent(e);
    };
    stream.on('data', (chunk: Buffer) => {
      if (failed) return;
      // Only the new chunk is searched for line ends: a large event arriving in many chunks costs linear time.
      let text = decoder.write(chunk);
      try {
        for (let nl = text.indexOf('\n'); nl !== -1 && !failed; nl = text.indexOf('\n')) {
          emit(line + text.slice(0, nl));
          line = '';
          text = text.slice(nl + 1);
        }
      } catch (err) {
        return fail(err as Error);
      }
      line += text;
      if (line.length > maxBytes) fail(new Error(`${what}: an event exceeds ${maxBytes} characters`));
    });
    stream.on('error', (err: Error) =>
      fail(err instanceof KubeTransportError ? err : new KubeTransportError(`${what}: ${err.message}`, true, err)),
    );
    stream.on('end', () => {
      if (failed) return;
      try {
        emit(line + decoder.end());
        resolve();
      } catch (err) {
        fail(err as Error);
      }
    });
  });
}
