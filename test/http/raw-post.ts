/**
 * A raw HTTP/1.1-over-TLS POST that can stop half-way through its body, for tests of what the server does
 * while a request is still arriving (node's https client always finishes what it starts).
 */
import tls from 'node:tls';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The status line and headers of a response, once all of them have arrived; null before. */
function parseHead(buf: Buffer): { status: number; headers: Record<string, string>; bodyStart: number } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [status, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(status.split(' ')[1]), headers, bodyStart: end + 4 };
}

/**
 * A POST whose headers announce `total` body bytes (or, with 'chunked', none: chunked transfer encoding); `send`
 * writes more of it. `response` settles with the first complete response (which may come before the body is
 * finished), `closed` when the server closes.
 */
export class RawPost {
  readonly socket: tls.TLSSocket;
  readonly response: Promise<RawResponse>;
  readonly closed: Promise<void>;

  readonly #chunked: boolean;

  constructor(port: number, ca: string, path: string, total: number | 'chunked') {
    this.#chunked = total === 'chunked';
    this.socket = tls.connect({ host: '127.0.0.1', port, ca });
    this.socket.on('error', () => {});
    const length = this.#chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${total}`;
    this.socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${length}\r\n\r\n`,
    );
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.response = new Promise((resolve, reject) => {
      // Chunks are joined once the head is in and again when the body is complete, not per chunk: answers can
      // be tens of MB.
      const chunks: Buffer[] = [];
      let received = 0;
      let head: ReturnType<typeof parseHead> = null;
      this.socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        head ??= parseHead(Buffer.concat(chunks));
        if (!head) return;
        const length = Number(head.headers['content-length'] ?? 0);
        if (received < head.bodyStart + length) return;
        const all = Buffer.concat(chunks);
        resolve({
          status: head.status,
          headers: head.headers,
          body: all.subarray(head.bodyStart, head.bodyStart + length).toString('utf8'),
        });
      });
      void this.closed.then(() =>
        reject(new Error(`connection closed before a whole response (${received} bytes received)`)),
      );
    });
    this.response.catch(() => {});
  }

  /** Writes `text` (as one chunk, when chunked) and resolves once it has been handed to the kernel. */
  send(text: string): Promise<void> {
    const framed = this.#chunked ? `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n` : text;
    return new Promise((resolve) => this.socket.write(framed, () => resolve()));
  }
}
