/**
 * The amplification of meshgate issue 11: reviews whose pod carries a huge number of empty required
 * node-selector terms (the 360 KB review holds 120,000; a 7 MiB body holds 2.4 million). Sent many at
 * once, each over its own TLS connection, to the server in its own process (test/http/child.ts); the figures
 * are what the server's process reached (VmHWM) and what every client got back.
 */
import tls from 'node:tls';
import { RawPost } from './raw-post.ts';
import { podCreateReview } from './reviews.ts';
import type { ServerChild } from './child.ts';

/**
 * A pod CREATE review with `terms` empty nodeSelectorTerms, as JSON text; with `padTo`, a list of zeros in the
 * spec fills it to that many bytes (the cheapest filler per byte that still costs heap when parsed).
 */
export function termsReview(uid: string, terms: number, padTo = 0): string {
  const head = JSON.stringify(
    podCreateReview(uid, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'amp', namespace: 'demo' },
      spec: {
        containers: [{ name: 'app', image: 'nginx' }],
        padding: ['ZEROS'],
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: ['TERMS'] } },
        },
      },
    }),
  );
  const withTerms = head.replace('"TERMS"', terms > 0 ? `{}${',{}'.repeat(terms - 1)}` : '');
  const zeros = Math.max(0, Math.floor((padTo - (withTerms.length - '"ZEROS"'.length)) / 2));
  return withTerms.replace('"ZEROS"', zeros > 0 ? `0${',0'.repeat(zeros - 1)}` : '');
}

/** The most empty terms whose review fits in `bytes`. */
export function termsFitting(bytes: number): number {
  return Math.floor((bytes - termsReview('u', 0).length) / 3);
}

export interface FloodResult {
  /** What the clients got: `200 <reason code>`, `429`, `413`, or `no answer` (connection lost). */
  outcomes: Record<string, number>;
  peakRss: number;
  ms: number;
  /** The server's exit code or signal if it died, else null. */
  died: string | null;
}

function outcome(status: number, body: string): string {
  if (status !== 200) return String(status);
  const r = (JSON.parse(body) as { response: { allowed: boolean; patch?: string; status?: { message: string } } })
    .response;
  if (r.allowed) return r.patch ? `200 patched (${(body.length / 1024 / 1024).toFixed(1)} MiB answer)` : '200 allowed';
  return `200 ${/\[([a-z_]+)\]$/.exec(r.status?.message ?? '')?.[1] ?? 'refused'}`;
}

/** Sends `n` copies of `body` at once to /mutate; waits for every answer (or lost connection). */
export async function flood(child: ServerChild, n: number, body: string): Promise<FloodResult> {
  const t0 = Date.now();
  const outcomes: Record<string, number> = {};
  const bytes = Buffer.from(body);
  await Promise.all(
    Array.from({ length: n }, async () => {
      const post = new RawPost(child.port, child.ca, '/mutate', bytes.length);
      post.socket.write(bytes);
      const key = await post.response.then(
        (r) => outcome(r.status, r.body),
        () => 'no answer',
      );
      outcomes[key] = (outcomes[key] ?? 0) + 1;
      post.socket.destroy();
    }),
  );
  const ms = Date.now() - t0;
  const peakRss = await child.stats().then(
    (st) => st.peakRss,
    () => NaN,
  );
  // A server the kernel killed may not have been reaped yet: wait for its exit before saying it lived.
  if (Number.isNaN(peakRss))
    for (let i = 0; i < 50 && child.exited() === null; i++) await new Promise((r) => setTimeout(r, 100));
  return { outcomes, peakRss, ms, died: child.exited() };
}

/**
 * Opens `n` TLS connections that stay silent (the server keeps each until its headers timeout): the memory of
 * held connections, to add to a flood's. Returns a function that closes them.
 */
export async function holdConnections(child: ServerChild, n: number): Promise<() => void> {
  const sockets: tls.TLSSocket[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next++ < n) {
        // From eight addresses (127.0.1.1-8): one client may hold only a quarter of the connections
        // (maxConnectionsPerClient), and the flood comes from 127.0.0.1.
        const localAddress = `127.0.1.${(next % 8) + 1}`;
        await new Promise<void>((resolve) => {
          const s = tls.connect(
            { host: '127.0.0.1', port: child.port, ca: child.ca, ...({ localAddress } as object) },
            () => resolve(),
          );
          s.on('error', () => resolve());
          s.resume();
          sockets.push(s);
        });
      }
    }),
  );
  return () => {
    for (const s of sockets) s.destroy();
  };
}

export function describeFlood(label: string, r: FloodResult): string {
  const answers = Object.entries(r.outcomes)
    .map(([k, v]) => `${v}× ${k}`)
    .join(', ');
  const rss = r.died ? `server DIED (${r.died})` : `server peak RSS ${(r.peakRss / 1024 / 1024).toFixed(0)} MiB`;
  return `${label}: ${rss}, ${(r.ms / 1000).toFixed(1)} s; answers: ${answers}`;
}
