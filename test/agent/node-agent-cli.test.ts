/** `meshgate node-agent` flags: defaults pinned, validation at the edge, usage errors exit 2 before any I/O. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { parseNodeAgentArgs, nodeAgentCommand } from '../../src/cli/node-agent.ts';

const IN_CLUSTER = { NODE_NAME: 'node-a', KUBERNETES_SERVICE_HOST: '10.0.0.1' };

describe('node-agent flags', () => {
  it('pins the defaults', () => {
    expect(parseNodeAgentArgs(['--plugin-type', 'istio-cni'], IN_CLUSTER)).toEqual({
      nodeName: 'node-a',
      pluginType: 'istio-cni',
      confDir: '/etc/cni/net.d',
      binDirs: ['/opt/cni/bin'],
      runtime: 'containerd',
      libcni: 'auto',
      maxConfNum: 1,
      multusDirs: [],
      // The thick Multus daemon's name for the runtime's conf dir (upstream's daemonset and OpenShift alike).
      multus: { paths: [{ from: '/host/etc/cni/net.d', to: '/etc/cni/net.d' }] },
      resyncMs: 300_000,
      debounceMs: 100,
      taintUnverified: false,
      kubeconfig: undefined,
      listen: undefined,
    });
  });

  it('takes the OpenShift model from the config (cni.multusNetwork)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-agent-multus-'));
    try {
      const file = join(dir, 'config.yaml');
      writeFileSync(file, 'mesh: istio\ncni:\n  multusNetwork: default/istio-cni\n');
      const options = parseNodeAgentArgs(['--config', file], IN_CLUSTER);
      expect(options.multus).toEqual({
        paths: [{ from: '/host/etc/cni/net.d', to: '/etc/cni/net.d' }],
        network: 'default/istio-cni',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('returns a frozen config', () => {
    const config = parseNodeAgentArgs(['--plugin-type', 'istio-cni'], IN_CLUSTER);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.binDirs)).toBe(true);
  });

  it('takes every flag', () => {
    const argv = [
      '--plugin-type',
      'linkerd-cni',
      '--node-name',
      'explicit',
      '--cni-conf-dir',
      '/host/etc/cni/net.d',
      '--cni-bin-dir',
      '/host/opt/cni/bin,/host/usr/libexec/cni',
      '--cni-bin-dir',
      '/x',
      '--runtime',
      'crio',
      '--libcni',
      '1.2',
      '--max-conf-num',
      '0',
      '--multus-dir',
      '/etc/cni/multus/net.d,/run/multus/cni/net.d',
      '--multus-path',
      '/host/run/multus/cni/net.d=/run/multus/cni/net.d',
      '--multus-path',
      '/host/etc/cni/net.d=/etc/kubernetes/cni/net.d',
      '--resync',
      '1m30s',
      '--debounce',
      '250ms',
      '--taint-unverified',
      '--kubeconfig',
      '/k',
      '--port',
      '9102',
      '--host',
      '10.1.2.3',
    ];
    expect(parseNodeAgentArgs(argv, {})).toEqual({
      nodeName: 'explicit',
      pluginType: 'linkerd-cni',
      confDir: '/host/etc/cni/net.d',
      binDirs: ['/host/opt/cni/bin', '/host/usr/libexec/cni', '/x'],
      runtime: 'crio',
      libcni: '1.2',
      maxConfNum: 0,
      multusDirs: ['/etc/cni/multus/net.d', '/run/multus/cni/net.d'],
      multus: {
        paths: [
          { from: '/host/run/multus/cni/net.d', to: '/run/multus/cni/net.d' },
          { from: '/host/etc/cni/net.d', to: '/etc/kubernetes/cni/net.d' },
        ],
      },
      resyncMs: 90_000,
      debounceMs: 250,
      taintUnverified: true,
      kubeconfig: '/k',
      listen: { host: '10.1.2.3', port: 9102 },
    });
  });

  it.each([
    { argv: ['--plugin-type', 'istio-cni'], env: { KUBERNETES_SERVICE_HOST: 'h' }, err: /NODE_NAME is required/ },
    { argv: [], env: IN_CLUSTER, err: /--config FILE or --mesh NAME is required \(or --plugin-type TYPE alone/ },
    {
      argv: ['--mesh', 'istio', '--plugin-type', 'linkerd-cni'],
      env: IN_CLUSTER,
      err: /--plugin-type linkerd-cni differs from istio-cni, the CNI plugin of mesh istio in --mesh istio/,
    },
    { argv: ['--plugin-type', 'istio-cni'], env: { NODE_NAME: 'n' }, err: /pass --kubeconfig/ },
    { argv: ['--plugin-type', 'istio-cni', '--runtime', 'cri-o'], env: IN_CLUSTER, err: /--runtime must be one of/ },
    {
      argv: ['--plugin-type', 'istio-cni', '--libcni', '1.4'],
      env: IN_CLUSTER,
      err: /--libcni must be auto or one of/,
    },
    {
      argv: ['--plugin-type', 'istio-cni', '--resync', '5 minutes'],
      env: IN_CLUSTER,
      err: /--resync: "5 minutes" is not a duration/,
    },
    {
      argv: ['--plugin-type', 'istio-cni', '--debounce', '0ms'],
      env: IN_CLUSTER,
      err: /--debounce: "0ms" is shorter than 1ms/,
    },
    {
      argv: ['--plugin-type', 'istio-cni', '--max-conf-num', 'one'],
      env: IN_CLUSTER,
      err: /--max-conf-num must be a whole number/,
    },
    { argv: ['--plugin-type', 'istio-cni', '--unknown'], env: IN_CLUSTER, err: /unknown/ },
    {
      argv: ['--plugin-type', 'istio-cni', '--multus-dir', 'etc/cni/multus/net.d'],
      env: IN_CLUSTER,
      err: /--multus-dir must be an absolute path, got "etc\/cni\/multus\/net.d"/,
    },
    {
      argv: ['--plugin-type', 'istio-cni', '--multus-path', '/host/etc/cni/net.d'],
      env: IN_CLUSTER,
      err: /--multus-path must be FROM=TO, two absolute paths/,
    },
    { argv: ['--plugin-type', 'istio-cni', '--port', '65536'], env: IN_CLUSTER, err: /--port: "65536" is not a port/ },
    { argv: ['--plugin-type', 'istio-cni', '--port', 'http'], env: IN_CLUSTER, err: /--port: "http" is not a port/ },
    {
      argv: ['--plugin-type', 'istio-cni', '--proxy-guard'],
      env: IN_CLUSTER,
      err: /--proxy-guard needs --config or --mesh/,
    },
    {
      argv: ['--mesh', 'istio', '--proxy-guard', '--proxy-guard-interval', '50ms'],
      env: IN_CLUSTER,
      err: /--proxy-guard-interval must be at least 100ms/,
    },
    {
      argv: ['--mesh', 'istio', '--proxy-guard', '--proc-root', 'proc'],
      env: IN_CLUSTER,
      err: /--proc-root must be an absolute path, got "proc"/,
    },
  ])('usage error: $err', async ({ argv, env, err }) => {
    const io = memoryIO('', env as Record<string, string>);
    expect(await nodeAgentCommand(argv, io)).toBe(2);
    expect(io.err).toMatch(err);
    expect(io.err).toContain('usage: meshgate node-agent');
  });

  it('the proxy guard: off unless asked; its interval, procfs and the mesh’s view from the config', () => {
    expect(parseNodeAgentArgs(['--mesh', 'istio'], IN_CLUSTER).guard).toBeUndefined();
    const argv = ['--mesh', 'linkerd', '--proxy-guard', '--proxy-guard-interval', '500ms', '--proc-root', '/host/proc'];
    const guard = parseNodeAgentArgs(argv, IN_CLUSTER).guard;
    expect(guard).toMatchObject({ intervalMs: 500, procRoot: '/host/proc' });
    expect(guard?.view).toMatchObject({ proxyName: 'linkerd-proxy', proxyUid: 2102 });
    expect(guard?.view).not.toHaveProperty('proxyGid');
    expect([...(guard?.view.meshNames ?? [])]).toEqual(['linkerd-proxy', 'linkerd-init', 'linkerd-network-validator']);
    expect(guard?.view.exemptGids({ 'config.linkerd.io/proxy-gid': '1337' })).toEqual([1337]);
    expect(parseNodeAgentArgs(['--mesh', 'istio', '--proxy-guard'], IN_CLUSTER).guard).toMatchObject({
      intervalMs: 1000,
      procRoot: '/proc',
      view: { proxyUid: 1337, proxyGid: 1337 },
    });
  });

  it('takes the plugin type and the redirect ports from the mesh profile', () => {
    expect(parseNodeAgentArgs(['--mesh', 'linkerd'], IN_CLUSTER)).toMatchObject({
      pluginType: 'linkerd-cni',
      expect: { inboundPort: 4143, outboundPort: 4140, proxyUid: 2102 },
    });
    expect(parseNodeAgentArgs(['--mesh', 'istio', '--plugin-type', 'istio-cni'], IN_CLUSTER)).toMatchObject({
      pluginType: 'istio-cni',
      expect: { inboundPort: 15006, outboundPort: 15001, proxyUid: 1337 },
    });
    // Without a profile there is nothing to compare the plugin's own config with.
    expect(parseNodeAgentArgs(['--plugin-type', 'istio-cni'], IN_CLUSTER).expect).toBeUndefined();
  });

  it('reads --config: a custom mesh with its own plugin and ports; a config naming another plugin than --plugin-type fails', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-agent-'));
    try {
      const file = join(dir, 'config.yaml');
      writeFileSync(file, 'mesh: linkerd\nproxy:\n  outboundPort: 4150\n');
      expect(parseNodeAgentArgs(['--config', file], IN_CLUSTER)).toMatchObject({
        pluginType: 'linkerd-cni',
        expect: { outboundPort: 4150 },
      });
      expect(() => parseNodeAgentArgs(['--config', file, '--plugin-type', 'istio-cni'], IN_CLUSTER)).toThrow(
        `--plugin-type istio-cni differs from linkerd-cni, the CNI plugin of mesh linkerd in ${file}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [['--mesh', 'consul'], /mesh: required: one of istio, linkerd, custom/],
    [['--mesh', 'istio', '--config', '/x.yaml'], /--config and --mesh go alone/],
    [['--config', '/nonexistent/meshgate.yaml'], /cannot read/],
  ])('config error, exit 2: %s', async (argv, err) => {
    const io = memoryIO('', IN_CLUSTER);
    expect(await nodeAgentCommand(argv, io)).toBe(2);
    expect(io.err).toMatch(err);
  });

  it('an invalid config is a startup error naming the key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-agent-'));
    try {
      const file = join(dir, 'config.yaml');
      writeFileSync(file, 'mesh: istio\nproxy:\n  image: x/y:1\n');
      const io = memoryIO('', IN_CLUSTER);
      expect(await nodeAgentCommand(['--config', file], io)).toBe(2);
      expect(io.err).toContain('proxy.image: not used with mesh istio');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is wired into the meshgate command table', async () => {
    const io = memoryIO();
    expect(await main(['node-agent', '--help'], io)).toBe(0);
    expect(io.out).toContain('--taint-unverified');
  });
});
