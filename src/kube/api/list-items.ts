/**
 * A Kubernetes list answer (`{"kind":"PodList","metadata":{…},"items":[{…},{…}]}`) read as it streams: each element
 * of the top-level `items` array is parsed alone and handed over as soon as its last byte arrives, and the rest of
 * the answer (kind, metadata with `continue`) is parsed at the end with `items` left empty.
 *
 * Why not JSON.parse of the whole page: a page of 500 pods (a few MB of JSON) parsed at once stays alive while its
 * items are judged, so it outlives the young generation's scavenges and is promoted; V8 then lets the old
 * generation grow to its first limit (well over 100 MB on a large machine) before collecting it, and `meshgate
 * check` at 3,000 Nodes and 6,000 pods peaked at 354 MiB (issue 32). One item at a time dies young.
 *
 * An item's `metadata.managedFields` is not parsed: it reads as `null`. No reader of a list here looks at it, and it
 * is the largest part of most objects' metadata (the field owners of every writer: the controller that created a
 * pod, the kubelet's status); skipped in the scan, it costs neither the copy nor the parse (issue 32: the repair
 * controller's start parsed every guarded pod whole).
 *
 * Scanned byte by byte: the structural characters (`{ } [ ] " \ :`) are ASCII, and no byte of a multi-byte UTF-8
 * character is ASCII, so a chunk boundary anywhere (inside a string, a character or an escape) is harmless.
 */

import type { IncomingMessage } from 'node:http';
import { KubeTransportError } from '../errors.ts';

/**
 * One item (or watch event) carries one object; etcd stores at most 1.5 MiB per object by default, and its JSON can be larger than
 * its stored protobuf. 16 MiB bounds what one line may hold in memory, far above any real object.
 */
export const MAX_ITEM_BYTES = 16 * 1024 * 1024;

export interface PageMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
/** JSON's white space is space, tab, CR and LF: all at most this. */
const SPACE = 0x20;
const NOT_AN_OBJECT = 'an item of the list is not an object';
/** What an item's skipped `metadata.managedFields` reads as. */
const SKIPPED = Buffer.from('null');

/** What is outside `items` (kind, apiVersion, metadata): a few hundred bytes; more means this is not a list. */
const MAX_REST_BYTES = 1024 * 1024;

export class ListItemsError extends Error {}

/**
 * Push parser: `write` each chunk as it arrives, `end` once the answer is complete. `each` gets every item, parsed,
 * in order; an item over `maxItemBytes` fails the parse (ListItemsError) rather than being held.
 */
export class ListItems {
  readonly #each: (item: unknown) => void;
  readonly #maxItemBytes: number;
  #depth = 0;
  #inString = false;
  #escaped = false;
  /**
   * Bytes of the string being read at depth 1 (a key of the list object, to find `items`), at depth 3 (a key of an
   * item, to find `metadata`) or at depth 4 inside an item's metadata (to find `managedFields`); `#keyDepth` says
   * which. Every string there is captured, keys and values alike: the one before a `{` or `[` is its key.
   */
  #key: number[] | undefined;
  #keyDepth = 0;
  #lastKey = '';
  #itemKey = '';
  #metadataKey = '';
  /** Inside an item's `metadata` object (depth 4 and deeper). */
  #inMetadata = false;
  /** Inside an item's `metadata.managedFields` value: its bytes are neither kept nor parsed. */
  #skipping = false;
  /** Inside the top-level `items` array (its elements are at depth 3 once opened). */
  #inItems = false;
  /** The pieces of the item being read (from its `{`), and their length. */
  #item: Buffer[] | undefined;
  #itemBytes = 0;
  /** The answer outside `items`. */
  #rest: Buffer[] = [];
  #restBytes = 0;

  constructor(each: (item: unknown) => void, maxItemBytes: number) {
    this.#each = each;
    this.#maxItemBytes = maxItemBytes;
  }

  write(chunk: Buffer): void {
    // The scan's state in locals (V8 keeps them in registers; private fields are loads and stores per byte),
    // written back before anything that may throw or read them.
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    let inItems = this.#inItems;
    let inMetadata = this.#inMetadata;
    let skipping = this.#skipping;
    const save = () => {
      this.#depth = depth;
      this.#inString = inString;
      this.#escaped = escaped;
      this.#inItems = inItems;
      this.#inMetadata = inMetadata;
      this.#skipping = skipping;
    };
    let restFrom = inItems ? -1 : 0;
    let itemFrom = this.#item && !skipping ? 0 : -1;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      if (inString) {
        if (!this.#key) {
          // A tight loop in JS: most strings are a few bytes, shorter than a native indexOf call costs.
          if (escaped) {
            escaped = false;
            i++;
          }
          while (i < n) {
            const b = chunk[i];
            if (b === QUOTE) break;
            i += b === BACKSLASH ? 2 : 1;
          }
          if (i > n)
            escaped = true; // the chunk ended on a backslash: its escaped byte is in the next one
          else if (i < n) inString = false;
          continue;
        }
        const c = chunk[i];
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (this.#key) {
            const key = String.fromCharCode(...this.#key);
            if (this.#keyDepth === 1) this.#lastKey = key;
            else if (this.#keyDepth === 3) this.#itemKey = key;
            else this.#metadataKey = key;
            this.#key = undefined;
          }
        } else if (this.#key && this.#key.length < 16) this.#key.push(c);
        continue;
      }
      const c = chunk[i];
      // Most bytes outside strings are none of the structural ones: skip them first.
      if (c !== QUOTE && c !== OPEN_OBJECT && c !== CLOSE_OBJECT && c !== OPEN_ARRAY && c !== CLOSE_ARRAY) {
        if (inItems && depth === 2 && c !== COMMA && c > SPACE) {
          save();
          throw new ListItemsError(NOT_AN_OBJECT);
        }
        continue;
      }
      if (c === QUOTE) {
        if (inItems && depth === 2) {
          save();
          throw new ListItemsError(NOT_AN_OBJECT);
        }
        inString = true;
        if (depth === 1 || (inItems && (depth === 3 || (depth === 4 && inMetadata && !skipping)))) {
          this.#key = [];
          this.#keyDepth = depth;
        }
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (inItems && depth === 3) inMetadata = c === OPEN_OBJECT && this.#itemKey === 'metadata';
        else if (inItems && depth === 4 && inMetadata && !skipping && this.#metadataKey === 'managedFields') {
          // Keep the item up to here, then `null` for the value; the value's bytes are skipped to its end.
          save();
          if (itemFrom >= 0 && i > itemFrom) this.#keepItem(chunk.subarray(itemFrom, i));
          this.#item?.push(SKIPPED);
          skipping = true;
          itemFrom = -1;
        }
        depth++;
        if (depth === 2 && c === OPEN_ARRAY && this.#lastKey === 'items') {
          save();
          this.#keepRest(chunk, restFrom, i + 1);
          restFrom = -1;
          inItems = true;
        } else if (inItems && depth === 3) {
          if (c !== OPEN_OBJECT) {
            save();
            throw new ListItemsError(NOT_AN_OBJECT);
          }
          this.#item = [];
          this.#itemBytes = 0;
          itemFrom = i;
        }
      } else {
        depth--;
        if (depth < 0) {
          save();
          throw new ListItemsError('the answer is not JSON: unbalanced brackets');
        }
        if (skipping && depth === 4) {
          skipping = false;
          itemFrom = i + 1;
        } else if (inItems && depth === 3) inMetadata = false;
        if (inItems && depth === 2 && this.#item) {
          save();
          this.#endItem(chunk, itemFrom, i + 1);
          itemFrom = -1;
        } else if (inItems && depth === 1) {
          inItems = false;
          restFrom = i;
        }
      }
    }
    save();
    if (this.#item && itemFrom >= 0 && !skipping) this.#keepItem(chunk.subarray(itemFrom));
    if (restFrom >= 0) this.#keepRest(chunk, restFrom, chunk.length);
  }

  /** The answer without its items, parsed; fails if the answer ended inside a value. */
  end(): unknown {
    if (this.#depth !== 0 || this.#inString) throw new ListItemsError('the answer ended before its last item');
    const text = Buffer.concat(this.#rest).toString('utf8').trim();
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new ListItemsError(`the answer is not JSON: ${(err as Error).message}`);
    }
  }

  #keepRest(chunk: Buffer, from: number, to: number): void {
    if (from < 0 || to <= from) return;
    this.#restBytes += to - from;
    if (this.#restBytes > MAX_REST_BYTES)
      throw new ListItemsError(`the answer has over ${MAX_REST_BYTES} bytes outside its items: not a list`);
    this.#rest.push(Buffer.from(chunk.subarray(from, to)));
  }

  #keepItem(piece: Buffer): void {
    this.#itemBytes += piece.length;
    if (this.#itemBytes > this.#maxItemBytes)
      throw new ListItemsError(`an item of the list exceeds ${this.#maxItemBytes} bytes`);
    // A copy: the chunk's memory is the socket's and is reused once this returns.
    this.#item?.push(Buffer.from(piece));
  }

  #endItem(chunk: Buffer, from: number, to: number): void {
    const pieces = this.#item ?? [];
    this.#item = undefined;
    const last = chunk.subarray(from, to);
    this.#itemBytes += last.length;
    if (this.#itemBytes > this.#maxItemBytes)
      throw new ListItemsError(`an item of the list exceeds ${this.#maxItemBytes} bytes`);
    const text = pieces.length ? Buffer.concat([...pieces, last]).toString('utf8') : last.toString('utf8');
    let item: unknown;
    try {
      item = JSON.parse(text);
    } catch (err) {
      throw new ListItemsError(`an item of the list is not JSON: ${(err as Error).message}`);
    }
    this.#each(item);
  }
}

/** A list answer streamed through ListItems; an error in it (or in `each`) ends the request. */
export function readItems(
  res: IncomingMessage,
  what: string,
  each: (item: unknown) => void,
  done: () => void,
): Promise<PageMeta> {
  return new Promise((resolve, reject) => {
    const items = new ListItems(each, MAX_ITEM_BYTES);
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      done();
      res.destroy();
      reject(
        err instanceof Error && !(err instanceof ListItemsError)
          ? err
          : new Error(`${what}: ${(err as Error).message}`),
      );
    };
    res.on('data', (chunk: Buffer) => {
      if (failed) return;
      try {
        items.write(chunk);
      } catch (err) {
        fail(err);
      }
    });
    res.on('error', (err) => fail(new KubeTransportError(`${what}: ${err.message}`, true, err)));
    res.on('end', () => {
      if (failed) return;
      done();
      try {
        const rest = items.end() as { metadata?: PageMeta } | undefined;
        resolve(rest?.metadata ?? {});
      } catch (err) {
        fail(err);
      }
    });
  });
}
