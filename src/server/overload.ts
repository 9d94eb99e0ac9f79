/**
 * Load shedding on the admission routes: a cap on request body bytes held at once (bodies over 16 KiB) and on
 * reviews being decided or answered at once (limits.ts says why each value). Beyond either, the client gets 429
 * with Retry-After: 1 and a JSON message naming the limit; client-go retries a 429 that carries Retry-After, within
 * the webhook's timeout, so a burst costs the apiserver a second, not a failed admission. Probes and /metrics are
 * not routed through here: a busy webhook must still look alive and ready.
 *
 * Bytes are metered as they arrive (not as Content-Length announces them), so a client that announces 7 MiB
 * and trickles holds only what it sent; they are released when the answer has been written or the
 * connection is gone, since the parsed body lives until then.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { TransportLimits } from './limits.ts';

/** Seconds a refused client should wait: long enough for a burst to drain, short against a 10 s timeout. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Bodies that announce at most 16 KiB are not metered: a stream wrapper per request cost a third of a typical
 * review's CPU (~100 µs), and such reviews (the captured corpus's are 2-8 KB) are bounded without it, by
 * maxConnections on the way in (1024 × 16 KiB) and maxInflightReviews once parsed.
 */
export const METER_FROM_BYTES = 16 * 1024;

export interface OverloadGuard {
  /** Meters the bytes of a body over METER_FROM_BYTES or of unknown length (preParsing). */
  meterBody: preParsingHookHandler;
  /**
   * Counts a review whose body is in until its answer is written; returns the 429 to throw instead when
   * maxInflightReviews are already in flight. Called first thing in the route (a hook costs more).
   */
  admitReview(request: FastifyRequest, reply: FastifyReply): OverloadError | null;
  inflight(): { reviews: number; bodyBytes: number };
  /** Counts a connection node dropped at maxConnections (wire to the server's 'drop' event). */
  connectionDropped(): void;
  /** Counts a connection the connection guard refused, evicted or closed (src/server/connection-guard.ts). */
  connectionRefused(limit: string): void;
}

export type OverloadError = Error & { statusCode: number; code: string };

function refusal(message: string): OverloadError {
  return Object.assign(new Error(message), { statusCode: 429, code: 'overloaded' });
}

export function isOverloaded(err: Error & { code?: string }): boolean {
  return err.code === 'overloaded';
}

function refuse(reply: FastifyReply): void {
  void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
}

export function overloadGuard(
  limits: Pick<TransportLimits, 'maxInflightReviews' | 'maxInflightBodyBytes'>,
  registry?: Registry,
): OverloadGuard {
  let reviews = 0;
  let bodyBytes = 0;
  const leave = () => reviews--;
  const refusals = new Counter({
    name: 'meshgate_overload_refusals_total',
    help: 'Requests refused (429) or connections dropped because a transport limit was reached, by limit',
    labelNames: ['limit'],
    registers: registry ? [registry] : [],
  });
  if (registry) {
    new Gauge({
      name: 'meshgate_inflight_reviews',
      help: 'Reviews being decided or answered',
      registers: [registry],
      collect() {
        this.set(reviews);
      },
    });
    new Gauge({
      name: 'meshgate_inflight_body_bytes',
      help: 'Admission request body bytes held',
      registers: [registry],
      collect() {
        this.set(bodyBytes);
      },
    });
  }

  /**
   * Passes the body through, taking each chunk from the budget; errors (429) when the budget is spent. The
   * body is piped only once the parser reads it: a request answered without reading its body (415, 413 on
   * Content-Length) leaves it to node, which discards it and keeps the connection usable.
   */
  function meter(request: FastifyRequest, reply: FastifyReply, payload: Readable): Transform {
    let held = 0;
    const release = () => {
      bodyBytes -= held;
      held = 0;
    };
    const metered = new Transform({
      transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
        if (bodyBytes + chunk.length > limits.maxInflightBodyBytes) {
          refusals.inc({ limit: 'maxInflightBodyBytes' });
          refuse(reply);
          request.log.warn(
            { heldBytes: bodyBytes, limit: limits.maxInflightBodyBytes },
            'request refused: body byte budget spent',
          );
          const message =
            `meshgate holds ${bodyBytes} bytes of request bodies (${held} of them this request's); ` +
            `${chunk.length} more would exceed its limit of ${limits.maxInflightBodyBytes} (maxInflightBodyBytes); ` +
            `retry in ${RETRY_AFTER_SECONDS} s`;
          // Given back at once, not when the answer is written: the parser drops what it read, and several large
          // bodies arriving together must not all be refused while each still counts against the others.
          release();
          done(refusal(message));
          return;
        }
        bodyBytes += chunk.length;
        held += chunk.length;
        done(null, chunk);
      },
    });
    // The parser may have stopped listening (a body over the size cap): an error must not go unhandled.
    metered.on('error', () => {});
    metered.once('resume', () => payload.pipe(metered));
    // pipe() does not pass errors on; an aborted upload must end the parse, not leave it waiting.
    payload.once('error', (err) => metered.destroy(err));
    reply.raw.once('finish', () => {
      // Whatever the parser left unread (a refused body's rest) is read and discarded, as node does with a
      // body nobody reads: it costs no memory, keeps the connection usable, and the client reads our answer.
      // Closing instead would make the kernel reset a connection that is still receiving, and the client
      // could lose the 429 before reading it.
      payload.unpipe(metered);
      payload.resume();
    });
    reply.raw.once('close', release);
    return metered;
  }

  return {
    meterBody(request, reply, payload, done) {
      const announced = Number(request.headers['content-length']);
      done(null, announced <= METER_FROM_BYTES ? payload : meter(request, reply, payload));
    },
    admitReview(request, reply) {
      if (reviews >= limits.maxInflightReviews) {
        refusals.inc({ limit: 'maxInflightReviews' });
        refuse(reply);
        request.log.warn(
          { inflight: reviews, limit: limits.maxInflightReviews },
          'request refused: too many reviews in flight',
        );
        return refusal(
          `meshgate is deciding or answering ${reviews} reviews already, its limit (maxInflightReviews); ` +
            `retry in ${RETRY_AFTER_SECONDS} s`,
        );
      }
      reviews++;
      reply.raw.once('close', leave);
      return null;
    },
    inflight: () => ({ reviews, bodyBytes }),
    connectionDropped: () => refusals.inc({ limit: 'maxConnections' }),
    connectionRefused: (limit) => refusals.inc({ limit }),
  };
}
