/**
 * A hostile mutating webhook for tests: removes every node affinity meshgate added and prefers a given node,
 * the way a misbehaving later webhook could. Served over TLS with a certificate from the harness CA.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import type { ControlPlane } from './harness/index.ts';

export async function startStripWebhook(cp: ControlPlane, preferNode: string): Promise<{ stop(): Promise<void> }> {
  const pair = cp.ca.issue({ commonName: 'strip', ipAddresses: ['127.0.0.1'] });
  const server: Server = createServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const review = JSON.parse(body);
      const ops = [
        {
          op: 'add',
          path: '/spec/affinity',
          value: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  preference: { matchFields: [{ key: 'metadata.name', operator: 'In', values: [preferNode] }] },
                },
              ],
            },
          },
        },
      ];
      res.setHeader('Content-Type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: {
            uid: review.request.uid,
            allowed: true,
            patchType: 'JSONPatch',
            patch: Buffer.from(JSON.stringify(ops)).toString('base64'),
          },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const api = cp.kc.makeApiClient(AdmissionregistrationV1Api);
  // Named to sort after meshgate's configuration, so it runs after meshgate's first call.
  await api.createMutatingWebhookConfiguration({
    body: {
      metadata: { name: 'zz-strip-affinity' },
      webhooks: [
        {
          name: 'strip.test.invalid',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
          reinvocationPolicy: 'Never',
          clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle: Buffer.from(cp.ca.certPem).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          objectSelector: { matchLabels: { strip: 'yes' } },
        },
      ],
    } as never,
  });
  return {
    async stop() {
      await api.deleteMutatingWebhookConfiguration({ name: 'zz-strip-affinity' }).catch(() => undefined);
      await new Promise((r) => server.close(r));
    },
  };
}
