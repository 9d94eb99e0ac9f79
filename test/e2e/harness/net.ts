// Loopback-only networking helpers: free ports, health probes, and running CLI tools (kubectl, helm).
import { execFile } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';

/** Ports this process has handed out: the kernel may offer a released port again, e.g. etcd's to kwok. */
const handedOut = new Set<number>();

/**
 * A currently free TCP port on 127.0.0.1 (the kernel picks it), never one this process handed out before. Another
 * process could still take it before the caller binds it; startControlPlane retries on "address already in use".
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await kernelPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('freePort: the kernel kept offering ports this process already handed out');
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface TlsClient {
  ca?: string;
  cert?: string;
  key?: string;
  /** Components' self-signed serving certs (scheduler, controller-manager) are not worth verifying in probes. */
  insecure?: boolean;
}

/** GET a URL (http or https) with a 5 s timeout; resolves with status and body, never rejects on HTTP errors. */
export function httpGet(url: string, tls: TlsClient = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const common = { method: 'GET', timeout: 5_000 };
    const req =
      u.protocol === 'https:'
        ? httpsRequest(u, { ...common, ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure })
        : httpRequest(u, common);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within 5s`)));
    req.on('error', reject);
    req.end();
  });
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to the tool's stdin (e.g. a manifest for `kubectl apply -f -`). */
  input?: string;
  /** Kill the tool after this long. Default 120 s: generous for a helm install on a loaded 2-core machine. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** Runs a CLI to completion. Never rejects for a non-zero exit: the caller asserts on `code` and `stderr`. */
export function runTool(bin: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      bin,
      args,
      { timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024, env: opts.env ?? process.env },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number' && !err.killed) return reject(err); // spawn failure (ENOENT)
        const code = err ? (typeof err.code === 'number' ? err.code : 124) : 0; // 124 = killed by timeout
        resolve({ code, stdout, stderr: err?.killed ? `${stderr}\n(killed after timeout)` : stderr });
      },
    );
    // A tool that exits without reading its input closes the pipe first; the write's EPIPE would then be an
    // uncaught error in the test run (seen in CI with helm). Its exit code and stderr say what happened instead.
    child.stdin?.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    if (opts.input === undefined) child.stdin?.end();
    else child.stdin?.end(opts.input);
  });
}
