// Run inside a pod's network namespace (nsenter --net=<netns> node dial.ts HOST PORT TIMEOUT_MS) by judge.ts:
// opens one TCP connection, reads the first line the other end sends, prints one JSON line and exits 0.
//   {"connected":true,"line":"meshgate-e2e-proxy port=15001 orig=203.0.113.1:80","ms":3}
//   {"connected":false,"error":"connect ENETUNREACH 203.0.113.1:80","ms":1}
// HOST must be unreachable from the test namespace (judge.ts asserts that first): with redirection the SYN is
// rewritten in the pod's nat OUTPUT chain and never leaves the pod.
import { connect } from 'node:net';

const [host, portText, timeoutText] = process.argv.slice(2);
const port = Number(portText);
const timeoutMs = Number(timeoutText ?? '3000');
if (!host || !Number.isInteger(port) || !Number.isInteger(timeoutMs)) {
  console.error('usage: dial.ts HOST PORT [TIMEOUT_MS]');
  process.exit(2);
}
const t0 = Date.now();
let line = '';
let connected = false;
const done = (error?: string) => {
  console.log(
    JSON.stringify({ connected, line: line.split('\n')[0], ...(error ? { error } : {}), ms: Date.now() - t0 }),
  );
  process.exit(0);
};
const socket = connect({ host, port });
socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
socket.on('connect', () => (connected = true));
socket.on('data', (d) => {
  line += d.toString('utf8');
  if (line.includes('\n') || line.length > 200) done();
});
socket.on('end', () => done());
socket.on('error', (err) => done(err.message));
