/** `meshgate node-agent` flags: defaults pinned, validation at the edge, usage errors exit 2 before any I/O. */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/agent/duration.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { parseNodeAgentArgs, run } from '../../src/cli/node-agent.ts';

const IN_CLUSTER = { NODE_NAME: 'node-a', KUBERNETES_SERVICE_HOST: '10.0.0.1' };

describe('node-agent flags', () => {
  it('pins the defaults', () => {
    expect(parseNodeAgentArgs(['--plugin-type', 'istio-cni'], IN_CLUSTER)).toEqual({
      nodeName: 'node-a',
      pluginType: 'istio-cni',
      confDir: '/etc/cni/net.d',
      binDirs: ['/opt/cni/bin'],
      runtime: 'containerd',
      maxConfNum: 1,
      resyncMs: 300_000,
      debounceMs: 100,
      taintUnverified: false,
      kubeconfig: undefined,
    });
  });

  it('returns a frozen config', () => {
    const config = parseNodeAgentArgs(['--plugin-type', 'istio-cni'], IN_CLUSTER);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.binDirs)).toBe(true);
  });

  it('takes every flag', () => {
    const argv = [
      '--plugin-type', 'linkerd-cni', '--node-name', 'explicit', '--cni-conf-dir', '/host/etc/cni/net.d',
      '--cni-bin-dir', '/host/opt/cni/bin,/host/usr/libexec/cni', '--cni-bin-dir', '/x', '--runtime', 'crio',
      '--max-conf-num', '0', '--resync', '1m30s', '--debounce', '250ms', '--taint-unverified', '--kubeconfig', '/k',
    ];
    expect(parseNodeAgentArgs(argv, {})).toEqual({
      nodeName: 'explicit',
      pluginType: 'linkerd-cni',
      confDir: '/host/etc/cni/net.d',
      binDirs: ['/host/opt/cni/bin', '/host/usr/libexec/cni', '/x'],
      runtime: 'crio',
      maxConfNum: 0,
      resyncMs: 90_000,
      debounceMs: 250,
      taintUnverified: true,
      kubeconfig: '/k',
    });
  });

  it.each([
    { argv: ['--plugin-type', 'istio-cni'], env: { KUBERNETES_SERVICE_HOST: 'h' }, err: /NODE_NAME is required/ },
    { argv: [], env: IN_CLUSTER, err: /--plugin-type is required/ },
    { argv: ['--plugin-type', 'istio-cni'], env: { NODE_NAME: 'n' }, err: /pass --kubeconfig/ },
    { argv: ['--plugin-type', 'istio-cni', '--runtime', 'cri-o'], env: IN_CLUSTER, err: /--runtime must be one of/ },
    { argv: ['--plugin-type', 'istio-cni', '--resync', '5 minutes'], env: IN_CLUSTER, err: /--resync must be a duration/ },
    { argv: ['--plugin-type', 'istio-cni', '--debounce', '0ms'], env: IN_CLUSTER, err: /--debounce must be a duration/ },
    { argv: ['--plugin-type', 'istio-cni', '--max-conf-num', 'one'], env: IN_CLUSTER, err: /--max-conf-num must be a whole number/ },
    { argv: ['--plugin-type', 'istio-cni', '--unknown'], env: IN_CLUSTER, err: /unknown/ },
  ])('usage error: $err', async ({ argv, env, err }) => {
    const io = memoryIO('', env as Record<string, string>);
    expect(await run(argv, io)).toBe(2);
    expect(io.err).toMatch(err);
    expect(io.err).toContain('usage: meshgate node-agent');
  });

  it('is wired into the meshgate command table', async () => {
    const io = memoryIO();
    expect(await main(['node-agent', '--help'], io)).toBe(0);
    expect(io.out).toContain('--taint-unverified');
  });
});

describe('parseDuration', () => {
  it.each([
    ['100ms', 100], ['5m', 300_000], ['30s', 30_000], ['1h', 3_600_000], ['1m30s', 90_000], ['1.5s', 1_500],
    ['', undefined], ['5', undefined], ['0s', undefined], ['5 m', undefined], ['-1s', undefined], ['5d', undefined],
  ])('%s → %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
});
