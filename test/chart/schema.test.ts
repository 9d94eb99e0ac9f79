// `helm lint` on the chart and values.schema.json rejecting bad values with a message that names the key, as helm
// prints it (so an operator's typo fails the install instead of becoming a default or a crash-looping webhook).
import { describe, expect, it } from 'vitest';
import { chartDir, helmWithValues, KUBE_VERSION, templateArgs, type Obj } from './helm.ts';

const lintCases: Array<[string, Obj]> = [
  ['default values', {}],
  ['redirect required, validate on unverified nodes', { config: { redirect: { mode: 'required', onUnverifiedNode: 'validate' } } }],
  ['redirect off', { config: { redirect: { mode: 'off' } } }],
  ['enforce-only', { config: { injection: { enabled: false } } }],
  ['cert-manager', { certs: { mode: 'cert-manager' } }],
  ['failurePolicy Ignore', { webhook: { mutating: { failurePolicy: 'Ignore' }, validating: { failurePolicy: 'Ignore' } } }],
  ['single replica, no agent', { webhook: { replicas: 1 }, nodeAgent: { enabled: false } }],
];

describe('helm lint --strict', () => {
  it.each(lintCases)('passes: %s', async (_name, values) => {
    const res = await helmWithValues(['lint', '--strict', chartDir, '--kube-version', KUBE_VERSION], values);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain('0 chart(s) failed');
  });
});

const badValues: Array<[string, Obj, string]> = [
  ['unknown redirect mode', { config: { redirect: { mode: 'sometimes' } } }, "at '/config/redirect/mode': value must be one of 'auto', 'required', 'off'"],
  ['unknown onUnverifiedNode', { config: { redirect: { onUnverifiedNode: 'allow' } } }, "at '/config/redirect/onUnverifiedNode': value must be one of 'reject', 'validate'"],
  ['typo in a config key (meshgate would refuse to start)', { config: { redirect: { mdoe: 'auto' } } }, "at '/config/redirect': additional properties 'mdoe' not allowed"],
  ['meshNamespace is the chart’s', { config: { meshNamespace: 'x' } }, "at '/config': additional properties 'meshNamespace' not allowed"],
  ['injection.enabled not a boolean', { config: { injection: { enabled: 'no' } } }, "at '/config/injection/enabled': got string, want boolean"],
  ['root proxy uid', { config: { proxy: { uid: 0 } } }, "at '/config/proxy/uid': minimum: got 0, want 1"],
  ['unknown certs mode', { certs: { mode: 'vault' } }, "at '/certs/mode': value must be one of 'self-managed', 'cert-manager'"],
  ['unknown failurePolicy', { webhook: { mutating: { failurePolicy: 'Never' } } }, "at '/webhook/mutating/failurePolicy': value must be one of 'Fail', 'Ignore'"],
  ['timeoutSeconds above the apiserver’s 30', { webhook: { timeoutSeconds: 31 } }, "at '/webhook/timeoutSeconds': maximum: got 31, want 30"],
  ['timeoutSeconds 0', { webhook: { timeoutSeconds: 0 } }, "at '/webhook/timeoutSeconds': minimum: got 0, want 1"],
  ['zero replicas', { webhook: { replicas: 0 } }, "at '/webhook/replicas': minimum: got 0, want 1"],
  ['fractional replicas', { webhook: { replicas: 1.5 } }, "at '/webhook/replicas': got number, want integer"],
  ['privileged port', { webhook: { port: 443 } }, "at '/webhook/port': minimum: got 443"],
  ['empty image repository', { image: { repository: '' } }, "at '/image/repository': minLength: got 0, want 1"],
  ['missing image repository', { image: { repository: null } }, "at '/image': missing property 'repository'"],
  ['unknown runtime', { nodeAgent: { runtime: 'docker' } }, "at '/nodeAgent/runtime': value must be one of 'containerd', 'crio'"],
  ['empty plugin type', { nodeAgent: { pluginType: '' } }, "at '/nodeAgent/pluginType': minLength: got 0, want 1"],
  ['relative CNI dir', { nodeAgent: { cniConfDir: 'etc/cni' } }, "at '/nodeAgent/cniConfDir'"],
  ['unknown top-level key', { webhooks: {} }, "additional properties 'webhooks' not allowed"],
];

describe('values.schema.json', () => {
  it.each(badValues)('rejects %s', async (_name, values, message) => {
    const res = await helmWithValues(templateArgs(), values);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain("values don't meet the specifications of the schema");
    expect(res.stderr).toContain(message);
  });
});
