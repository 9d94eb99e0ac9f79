/**
 * Service-based webhooks reaching a server of the test, with no packet off loopback. A chart installed as users
 * install it keeps `clientConfig.service`, so the apiserver dials the Service's ClusterIP, which no test may do
 * (issue 21: anything routed off loopback leaves the machine). The apiserver sends that traffic through its
 * `cluster` egress selector when it has one: here an HTTP CONNECT proxy on a Unix socket, which this module serves.
 * It answers only CONNECTs to the addresses `route` maps to a loopback port, and pipes them there; every other one
 * is refused (403) without a dial. The rest of the path is real: the apiserver resolves the Service to its
 * ClusterIP, verifies the served certificate against the caBundle for <service>.<namespace>.svc, and calls.
 * Start the control plane with `apiserverArgs: [egress.apiserverArg]`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EgressProxy {
  /** `--egress-selector-config-file=…` for the apiserver. */
  apiserverArg: string;
  /** CONNECT targets seen, in order, with what became of each ("127.0.0.1:PORT" or "refused"). */
  connects: Array<{ target: string; to: string }>;
  stop(): Promise<void>;
}

/** The request head a CONNECT may have: a line and a Host header; more is not the apiserver. */
const MAX_HEAD = 4096;

/**
 * `route(host, port)`: the loopback port to pipe a CONNECT to, or undefined to refuse it. Called per connection, so
 * a test moves a Service to another server (a rolling update) by changing what it returns.
 */
export function startEgressProxy(route: (host: string, port: number) => number | undefined): EgressProxy {
  // Short: a Unix socket path holds at most 107 bytes.
  const dir = mkdtempSync(join(tmpdir(), 'mg-egress-'));
  const socket = join(dir, 'proxy.sock');
  const config = join(dir, 'egress.yaml');
  writeFileSync(
    config,
    [
      'apiVersion: apiserver.k8s.io/v1beta1',
      'kind: EgressSelectorConfiguration',
      'egressSelections:',
      '  - name: cluster',
      '    connection:',
      '      proxyProtocol: HTTPConnect',
      '      transport:',
      '        uds:',
      `          udsName: ${socket}`,
      '',
    ].join('\n'),
  );
  const connects: EgressProxy['connects'] = [];
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD) client.destroy();
        return;
      }
      client.off('data', onData);
      const m = /^CONNECT ([^\s:]+|\[[^\]]+\]):(\d+) HTTP\/1\.1\r\n/.exec(head.subarray(0, end).toString('latin1'));
      const target = m ? `${m[1]}:${m[2]}` : head.subarray(0, 60).toString('latin1');
      const port = m ? route(m[1].replace(/^\[|\]$/g, ''), Number(m[2])) : undefined;
      if (port === undefined) {
        connects.push({ target, to: 'refused' });
        client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      connects.push({ target, to: `127.0.0.1:${port}` });
      const upstream = connect({ host: '127.0.0.1', port }, () => {
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        // TLS: the client speaks first, so nothing past the head was sent yet.
        if (head.length > end + 4) upstream.write(head.subarray(end + 4));
        client.pipe(upstream).pipe(client);
      });
      open.add(upstream);
      upstream.on('close', () => {
        open.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
    };
    client.on('data', onData);
  });
  server.listen(socket);
  return {
    apiserverArg: `--egress-selector-config-file=${config}`,
    connects,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
