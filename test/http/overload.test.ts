/**
 * Load shedding on the admission routes (src/server/overload.ts), over real TLS sockets on loopback: the cap on
 * reviews in flight and the budget of request body bytes held, each refused with 429, Retry-After and a JSON
 * message naming the limit; probes still answered; everything served again once the load is gone; bytes
 * counted as they arrive, not as announced.
 */
import { describe, it, expect, afterEach } from 'vitest';
import type { AdmissionHandler } from '../../src/admission/handlers.ts';
import { BODY_LIMIT } from '../../src/server/limits.ts';
import { METER_FROM_BYTES } from '../../src/server/overload.ts';
import { listening, reviewOfSize, type Listening } from './listening.ts';
import { RawPost } from './raw-post.ts';
import { podReview } from './helpers.ts';

const MiB = 1024 * 1024;
const servers: Listening[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(routes: Record<string, AdmissionHandler>, limits = {}): Promise<Listening> {
  const s = await listening(routes, limits);
  servers.push(s);
  return s;
}

const allow: AdmissionHandler = () => ({ kind: 'allow', reason: 'ok' });

async function get(s: Listening, url: string): Promise<{ status: number; body: string }> {
  const res = await s.app.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.body };
}

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

/** One whole POST over its own connection. */
async function post(s: Listening, path: string, body: string) {
  const p = new RawPost(s.port, s.ca, path, Buffer.byteLength(body));
  await p.send(body);
  return p.response;
}

describe('reviews in flight', () => {
  it('beyond maxInflightReviews: 429 with Retry-After and the limit named; probes still served; served again after', async () => {
    const gates: Array<() => void> = [];
    const held: AdmissionHandler = () =>
      new Promise((resolve) => gates.push(() => resolve({ kind: 'allow', reason: 'ok' })));
    const s = await serve({ '/held': held, '/mutate': allow }, { maxInflightReviews: 3 });

    const first = [1, 2, 3].map((i) => post(s, '/held', JSON.stringify(podReview(`held-${i}`))));
    for (let i = 0; gates.length < 3 && i < 200; i++) await new Promise((r) => setTimeout(r, 25));
    expect(gates.length).toBe(3);

    const refused = await post(s, '/mutate', JSON.stringify(podReview('fourth')));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    const body = JSON.parse(refused.body) as { error: string; message: string };
    expect(body.error).toBe('overloaded');
    expect(body.message).toMatch(/deciding or answering 3 reviews already.*maxInflightReviews/);
    console.log(`[overload] refused: ${refused.status} ${refused.body}`);

    expect((await get(s, '/healthz')).status).toBe(200);
    expect((await get(s, '/readyz')).status).toBe(200);
    const metrics = (await get(s, '/metrics')).body;
    expect(metric(metrics, 'meshgate_overload_refusals_total{limit="maxInflightReviews"}')).toBe(1);
    expect(metric(metrics, 'meshgate_inflight_reviews')).toBe(3);

    for (const open of gates) open();
    for (const r of await Promise.all(first)) expect(r.status).toBe(200);
    const again = await post(s, '/mutate', JSON.stringify(podReview('after')));
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ response: { uid: 'after', allowed: true } });
  });
});

describe('request body bytes held', () => {
  // A budget of one 7 MiB body (the least it may be): the default is two.
  const oneBody = { maxInflightBodyBytes: BODY_LIMIT };

  it('a body that would overrun the budget is refused mid-upload; the held one completes', async () => {
    const s = await serve({ '/mutate': allow }, oneBody);
    const bigText = reviewOfSize('big', 6 * MiB);
    const big = new RawPost(s.port, s.ca, '/mutate', bigText.length);
    await big.send(bigText.slice(0, 5 * MiB));
    let heldBytes = 0;
    for (let i = 0; heldBytes < 5 * MiB && i < 400; i++) {
      await new Promise((r) => setTimeout(r, 25));
      heldBytes = metric((await get(s, '/metrics')).body, 'meshgate_inflight_body_bytes');
    }
    expect(heldBytes).toBe(5 * MiB);

    const secondText = reviewOfSize('second', 3 * MiB);
    const second = new RawPost(s.port, s.ca, '/mutate', secondText.length);
    void second.send(secondText);
    const refused = await second.response;
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    // The rest of the refused body is read and discarded rather than the connection closed under a client that
    // is still sending (which the kernel answers with a reset that can swallow the 429).
    expect(refused.headers.connection).not.toBe('close');
    await new Promise((r) => setTimeout(r, 200));
    expect(second.socket.destroyed).toBe(false);
    second.socket.destroy();
    expect(JSON.parse(refused.body)).toMatchObject({
      error: 'overloaded',
      message: expect.stringMatching(/limit of 7340032 \(maxInflightBodyBytes\)/),
    });
    console.log(`[overload] refused mid-upload: ${refused.body}`);

    await big.send(bigText.slice(5 * MiB));
    const done = await big.response;
    expect(done.status).toBe(200);
    expect(JSON.parse(done.body)).toMatchObject({ response: { uid: 'big', allowed: true } });
    big.socket.destroy();
    await big.closed;

    expect((await post(s, '/mutate', secondText)).status).toBe(200);
    const metrics = (await get(s, '/metrics')).body;
    expect(metric(metrics, 'meshgate_inflight_body_bytes')).toBe(0);
    expect(metric(metrics, 'meshgate_overload_refusals_total{limit="maxInflightBodyBytes"}')).toBe(1);
  });

  it('bytes count as they arrive: a client announcing the full 7 MiB and sending 1 KB does not block a 6 MiB review', async () => {
    const s = await serve({ '/mutate': allow }, oneBody);
    const trickler = new RawPost(s.port, s.ca, '/mutate', BODY_LIMIT);
    await trickler.send(`{"apiVersion":"admission.k8s.io/v1",${' '.repeat(1024)}`);
    const res = await post(s, '/mutate', reviewOfSize('big', 6 * MiB));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ response: { uid: 'big' } });
    trickler.socket.destroy();
    await trickler.closed;
  });

  it('a body announcing 16 KiB or less is not metered; one of unknown length (chunked) is', async () => {
    const s = await serve({ '/mutate': allow }, oneBody);
    const heldBytes = async () => metric((await get(s, '/metrics')).body, 'meshgate_inflight_body_bytes');
    const small = new RawPost(s.port, s.ca, '/mutate', METER_FROM_BYTES);
    await small.send(`{${' '.repeat(METER_FROM_BYTES - 2)}`);
    const chunked = new RawPost(s.port, s.ca, '/mutate', 'chunked');
    await chunked.send(`{${' '.repeat(64 * 1024)}`);
    let held = 0;
    for (let i = 0; i < 400 && held < 64 * 1024; i++) {
      await new Promise((r) => setTimeout(r, 25));
      held = await heldBytes();
    }
    // Only the chunked body's bytes (64 KiB and its brace) are held, not the small one's.
    expect(held).toBe(64 * 1024 + 1);
    small.socket.destroy();
    chunked.socket.destroy();
  });

  it('a connection that goes away mid-upload gives its bytes back', async () => {
    const s = await serve({ '/mutate': allow }, oneBody);
    const gone = new RawPost(s.port, s.ca, '/mutate', 4 * MiB);
    await gone.send(`{${' '.repeat(2 * MiB)}`);
    for (let i = 0; i < 400 && metric((await get(s, '/metrics')).body, 'meshgate_inflight_body_bytes') < 2 * MiB; i++)
      await new Promise((r) => setTimeout(r, 25));
    gone.socket.destroy();
    let held = NaN;
    for (let i = 0; i < 400 && held !== 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      held = metric((await get(s, '/metrics')).body, 'meshgate_inflight_body_bytes');
    }
    expect(held).toBe(0);
    expect((await post(s, '/mutate', reviewOfSize('whole', 7 * MiB - 1))).status).toBe(200);
  });
});
