// `helm test`: asks the webhook, through its Service and over TLS trusting only meshgate's CA, whether it is ready, then
// sends it one AdmissionReview (a pod CREATE, on /validate: nothing is created) and checks the answer is an
// AdmissionReview for the same uid. Node built-ins only: it runs in meshgate's own image.
// Environment: WEBHOOK_URL (https://<service>.<namespace>.svc:443), CA_FILE (PEM), TIMEOUT_MS (default 10000).
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { randomUUID } from 'node:crypto';

const url = process.env.WEBHOOK_URL;
const ca = readFileSync(process.env.CA_FILE ?? '/etc/meshgate/ca/ca.crt', 'utf8');
// The apiserver's default webhook timeout.
const timeoutMs = Number(process.env.TIMEOUT_MS ?? 10_000);

function call(path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      {
        method: body === undefined ? 'GET' : 'POST',
        ca,
        timeout: timeoutMs,
        headers:
          body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exit(1);
}

if (!url) fail('WEBHOOK_URL is not set');
const uid = randomUUID();
const review = {
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'meshgate-helm-test',
    operation: 'CREATE',
    dryRun: true,
    userInfo: { username: 'meshgate-helm-test' },
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'helm-test', namespace: 'meshgate-helm-test' },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    },
  },
};

try {
  const ready = await call('/readyz');
  if (ready.status !== 200) fail(`${url}/readyz answered ${ready.status}: ${ready.body.trim()}`);
  const res = await call('/validate', JSON.stringify(review));
  if (res.status !== 200) fail(`${url}/validate answered ${res.status}: ${res.body.slice(0, 500)}`);
  const answer = JSON.parse(res.body);
  if (
    answer.kind !== 'AdmissionReview' ||
    answer.response?.uid !== uid ||
    typeof answer.response.allowed !== 'boolean'
  ) {
    fail(
      `${url}/validate answered something that is not the AdmissionReview for uid ${uid}: ${res.body.slice(0, 500)}`,
    );
  }
  console.log(
    `OK: ${url} is ready and answered review ${uid}: allowed=${answer.response.allowed}${answer.response.status?.message ? ` (${answer.response.status.message})` : ''}`,
  );
} catch (err) {
  fail(`${url}: ${err.message}`);
}
