// `helm lint` on the chart for each mesh profile, and values.schema.json (plus the templates' own checks) rejecting
// bad values with a message that names the key, as helm prints it: an operator's typo fails the install instead of
// becoming a default, a crash-looping webhook, or an image that does not exist.
import { describe, expect, it } from 'vitest';
import { chartDir, helmWithValues, KUBE_VERSION, templateArgs, type Obj } from './helm.ts';
import { profileValues } from './profiles.ts';

const lintCases: Array<[string, Obj]> = [
  ['istio', profileValues('istio')],
  ['linkerd', profileValues('linkerd')],
  ['custom with its images and plugin', profileValues('custom')],
  [
    'istio, redirect required, validate on unverified nodes',
    profileValues('istio', { config: { redirect: { mode: 'required', onUnverifiedNode: 'validate' } } }),
  ],
  [
    'linkerd, cert-manager, mutating Ignore',
    profileValues('linkerd', { certs: { mode: 'cert-manager' }, webhook: { mutating: { failurePolicy: 'Ignore' } } }),
  ],
  [
    'own selectors and match conditions',
    profileValues('linkerd', {
      webhook: {
        selectors: [{ name: 'team-a', namespaceSelector: { matchLabels: { team: 'a' } } }],
        matchConditions: [
          { name: 'not-load-tests', expression: "!('load-test' in object.metadata.?labels.orValue({}))" },
        ],
      },
    }),
  ],
  [
    'single replicas, no agent, no repair',
    profileValues('istio', {
      webhook: { replicas: 1 },
      nodeAgent: { enabled: false },
      repairController: { enabled: false },
    }),
  ],
];

describe('helm lint --strict', () => {
  it.each(lintCases)('passes: %s', async (_name, values) => {
    const res = await helmWithValues(['lint', '--strict', chartDir, '--kube-version', KUBE_VERSION], values);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain('0 chart(s) failed');
  });
});

const SCHEMA = "values don't meet the specifications of the schema";
const istio = (v: Obj = {}) => profileValues('istio', v);
const custom = (config: Obj) => ({ mesh: 'custom', config });
const badValues: Array<[string, Obj, string]> = [
  ['no mesh (no default: it would render images that may not exist)', {}, "at '': missing property 'mesh'"],
  ['an unknown mesh', { mesh: 'consul' }, "at '/mesh': value must be one of 'istio', 'linkerd', 'custom'"],
  ['custom without its images and plugin', custom({}), "at '/config': missing properties 'proxy', 'init', 'cni'"],
  [
    'custom without the init image',
    custom({ proxy: { image: 'docker.io/istio/proxyv2:1.27.0' }, init: {}, cni: { pluginType: 'istio-cni' } }),
    "at '/config/init': missing property 'image'",
  ],
  [
    'custom with recognisedImages',
    custom({
      proxy: { image: 'a/b:1' },
      init: { image: 'a/b:1' },
      cni: { pluginType: 'x' },
      recognisedImages: { proxy: ['a/b'] },
    }),
    "at '/config': additional properties 'recognisedImages' not allowed",
  ],
  [
    'istio with a proxy image (Istio’s injector injects)',
    istio({ config: { proxy: { image: 'a/b:1' } } }),
    "at '/config/proxy': additional properties 'image' not allowed",
  ],
  [
    'istio with init args',
    istio({ config: { init: { args: ['x'] } } }),
    "at '/config/init': additional properties 'args' not allowed",
  ],
  [
    'istio with volumes',
    istio({ config: { volumes: [{ name: 'x' }] } }),
    "at '/config': additional properties 'volumes' not allowed",
  ],
  [
    'istio with nativeSidecar',
    istio({ config: { injection: { nativeSidecar: 'on' } } }),
    "at '/config/injection': additional properties 'nativeSidecar' not allowed",
  ],
  [
    'linkerd with a proxy gid',
    profileValues('linkerd', { config: { proxy: { gid: 5 } } }),
    "at '/config/proxy': additional properties 'gid' not allowed",
  ],
  [
    'the removed injection.enabled',
    istio({ config: { injection: { enabled: false } } }),
    "additional properties 'enabled' not allowed",
  ],
  [
    'validating failurePolicy Ignore',
    istio({ webhook: { validating: { failurePolicy: 'Ignore' } } }),
    "at '/webhook/validating/failurePolicy': value must be 'Fail'",
  ],
  [
    'unknown mutating failurePolicy',
    istio({ webhook: { mutating: { failurePolicy: 'Never' } } }),
    "at '/webhook/mutating/failurePolicy': value must be one of 'Fail', 'Ignore'",
  ],
  [
    'a selector entry without a name',
    istio({ webhook: { selectors: [{ namespaceSelector: {} }] } }),
    "missing property 'name'",
  ],
  [
    'a selector operator that does not exist',
    istio({
      webhook: {
        selectors: [{ name: 'x', namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Equals' }] } }],
      },
    }),
    "value must be one of 'In', 'NotIn', 'Exists', 'DoesNotExist'",
  ],
  [
    'a match condition without an expression',
    istio({ webhook: { matchConditions: [{ name: 'x' }] } }),
    "missing property 'expression'",
  ],
  [
    'unknown redirect mode',
    istio({ config: { redirect: { mode: 'sometimes' } } }),
    "at '/config/redirect/mode': value must be one of 'auto', 'required', 'off'",
  ],
  [
    'typo in a config key (meshgate would refuse to start)',
    istio({ config: { redirect: { mdoe: 'auto' } } }),
    "at '/config/redirect': additional properties 'mdoe' not allowed",
  ],
  [
    'meshNamespace is the chart’s',
    istio({ config: { meshNamespace: 'x' } }),
    "additional properties 'meshNamespace' not allowed",
  ],
  ['mesh inside config', istio({ config: { mesh: 'istio' } }), "additional properties 'mesh' not allowed"],
  ['root proxy uid', istio({ config: { proxy: { uid: 0 } } }), "at '/config/proxy/uid': minimum: got 0, want 1"],
  [
    'a verdict age under a minute',
    istio({ config: { cni: { maxVerdictAgeSeconds: 30 } } }),
    "at '/config/cni/maxVerdictAgeSeconds': minimum: got 30, want 60",
  ],
  [
    'the removed nodeAgent.pluginType (now config.cni.pluginType)',
    istio({ nodeAgent: { pluginType: 'istio-cni' } }),
    "at '/nodeAgent': additional properties 'pluginType' not allowed",
  ],
  [
    'timeoutSeconds above the apiserver’s 30',
    istio({ webhook: { timeoutSeconds: 31 } }),
    "at '/webhook/timeoutSeconds': maximum: got 31, want 30",
  ],
  ['zero replicas', istio({ webhook: { replicas: 0 } }), "at '/webhook/replicas': minimum: got 0, want 1"],
  ['privileged port', istio({ webhook: { port: 443 } }), "at '/webhook/port': minimum: got 443"],
  ['missing image repository', istio({ image: { repository: null } }), "at '/image': missing property 'repository'"],
  [
    'unknown runtime',
    istio({ nodeAgent: { runtime: 'docker' } }),
    "at '/nodeAgent/runtime': value must be one of 'containerd', 'crio'",
  ],
  [
    'a lease duration that is no duration',
    istio({ repairController: { leaderElection: { leaseDuration: '15' } } }),
    "at '/repairController/leaderElection/leaseDuration'",
  ],
  ['unknown top-level key', istio({ webhooks: {} }), "additional properties 'webhooks' not allowed"],
  [
    'an admission mark Secret name that is none',
    istio({ admissionMark: { secretName: 'Mark_Key' } }),
    "at '/admissionMark/secretName'",
  ],
  [
    'the admission mark’s create as a string',
    istio({ admissionMark: { create: 'yes' } }),
    "at '/admissionMark/create'",
  ],
];

describe('values.schema.json', () => {
  it.each(badValues)('rejects %s', async (_name, values, message) => {
    const res = await helmWithValues(templateArgs(), values);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(SCHEMA);
    expect(res.stderr).toContain(message);
  });
});

const templateChecks: Array<[string, Obj, string]> = [
  [
    'custom with the never-published proxy image',
    custom({
      proxy: { image: 'ghcr.io/meshgate/proxy:0.1.0' },
      init: { image: 'docker.io/istio/proxyv2:1.27.0' },
      cni: { pluginType: 'istio-cni' },
    }),
    'config.proxy.image: "ghcr.io/meshgate/proxy:0.1.0" names an image that was never published; set the image this mesh really runs',
  ],
  [
    'custom with an example registry',
    custom({
      proxy: { image: 'docker.io/istio/proxyv2:1.27.0' },
      init: { image: 'registry.example/init:1' },
      cni: { pluginType: 'istio-cni' },
    }),
    'config.init.image: "registry.example/init:1" is on an example registry',
  ],
  [
    'a placeholder validator image',
    istio({ config: { validator: { image: '<your-registry>/meshgate:1' } } }),
    'config.validator.image: "<your-registry>/meshgate:1" is a placeholder',
  ],
  [
    'leader election where a leader could act after another took over',
    istio({ repairController: { leaderElection: { renewDeadline: '20s' } } }),
    'repairController.leaderElection: retryPeriod (2s) < renewDeadline (20s) < leaseDuration (15s) must hold',
  ],
];

describe('template checks', () => {
  it.each(templateChecks)('rejects %s', async (_name, values, message) => {
    const res = await helmWithValues(templateArgs(), values);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(message);
  });
});
