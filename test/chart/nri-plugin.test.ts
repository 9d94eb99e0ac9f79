// The chart's nriPlugin DaemonSet (meshgate's NRI plugin, nri/; docs/security.md "Who can become the proxy"): off
// by default; when on, its flags are exactly what src/agent/guard/start.ts nriPluginArgs computes from the config
// file the same release renders (so the plugin and the node agent's guard judge the same identity and names), for
// every profile and for overridden identities; it reaches the runtime's socket and nothing else.
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { nriPluginArgs } from '../../src/agent/guard/start.ts';
import { buildConfig } from '../../src/config/load.ts';
import { render, type Obj } from './helm.ts';
import { MESHES, profileValues } from './profiles.ts';

async function rendered(values: Obj) {
  const r = await render(values);
  const config = buildConfig(parseYaml(r.one('ConfigMap', 'meshgate').data['config.yaml']), 'rendered ConfigMap');
  return { r, config, ds: r.all('DaemonSet').find((d) => d.metadata.name === 'meshgate-nri') };
}

describe('nriPlugin', () => {
  it('is off by default', async () => {
    expect((await rendered(profileValues('istio'))).ds).toBeUndefined();
  });

  const cases: Array<[string, Obj]> = [
    ...MESHES.map((m): [string, Obj] => [`mesh ${m}`, profileValues(m, { nriPlugin: { enabled: true } })]),
    [
      'linkerd with another proxy UID',
      profileValues('linkerd', { nriPlugin: { enabled: true }, config: { proxy: { uid: 2103 } } }),
    ],
    [
      'custom with its own container names and identity',
      profileValues('custom', {
        nriPlugin: { enabled: true, seccomp: false },
        config: {
          proxy: {
            image: 'docker.io/istio/proxyv2:1.27.0',
            args: ['proxy', 'sidecar'],
            name: 'sidecar',
            uid: 4000,
            gid: 4001,
          },
          init: { image: 'docker.io/istio/proxyv2:1.27.0', name: 'redirect' },
          validator: { name: 'check', uid: 4000, gid: 4001 },
        },
      }),
    ],
  ];
  it.each(cases)('%s: the flags nriPluginArgs computes from the rendered config', async (_n, values) => {
    const { ds, config } = await rendered(values);
    const c = ds?.spec.template.spec.containers[0];
    const seccomp = values.nriPlugin.seccomp === false ? ['--seccomp=false'] : [];
    expect(c.args).toEqual(['--socket=/var/run/nri/nri.sock', ...nriPluginArgs(config), ...seccomp]);
  });

  it('mounts only the socket’s dir, runs as root without capabilities or an API token', async () => {
    const { ds } = await rendered(
      profileValues('istio', { nriPlugin: { enabled: true, socketPath: '/run/nri/x.sock' } }),
    );
    const pod = ds?.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.hostPID).toBeUndefined();
    expect(pod.hostNetwork).toBeUndefined();
    expect(pod.volumes).toEqual([{ name: 'nri', hostPath: { path: '/run/nri', type: 'DirectoryOrCreate' } }]);
    expect(pod.containers[0].args[0]).toBe('--socket=/run/nri/x.sock');
    expect(pod.containers[0].securityContext).toEqual({
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });
});
