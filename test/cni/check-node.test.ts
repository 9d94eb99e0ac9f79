/** `meshgate check-node` through checkNodeCommand(argv, memoryIO()): output for people, JSON, exit codes. */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkNodeCommand } from '../../src/cli/check-node.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { LINE_SPLIT_DIR, nodeDirs, type NodeDirs } from './helpers.ts';

let dirs: NodeDirs;
afterEach(() => dirs?.cleanup());

function layout(files: Record<string, string>, bins = ['calico', 'portmap', 'istio-cni']) {
  dirs = nodeDirs();
  for (const [name, content] of Object.entries(files)) dirs.conf(name, content);
  for (const b of bins) dirs.bin(b);
  return ['--cni-conf-dir', dirs.confDir, '--cni-bin-dir', dirs.binDir, '--plugin-type', 'istio-cni'];
}

describe('meshgate check-node', () => {
  it('exit 0 and a readable account when verified', async () => {
    const io = memoryIO();
    const code = await checkNodeCommand(
      layout({ '10-calico.conflist': 'corpus:istio__10-calico.conflist-istioconfig' }),
      io,
    );
    expect(code).toBe(0);
    expect(io.out).toContain('Runtime:    containerd (max_conf_num 1)');
    expect(io.out).toMatch(/\* 10-calico\.conflist\s+LOADED/);
    expect(io.out).toContain('Chain:       calico → portmap → [istio-cni]');
    expect(io.out).toContain('Verdict:     VERIFIED (verified)');
    expect(io.err).toBe('');
  });

  it('exit 1 naming the file that wins and what to do (multus sorts first)', async () => {
    const io = memoryIO();
    const argv = layout({
      '00-multus.conf': 'corpus:multus__00-multus.conf',
      '10-calico.conflist': 'corpus:istio__10-calico.conflist-istioconfig',
    });
    expect(await checkNodeCommand(argv, io)).toBe(1);
    expect(io.out).toMatch(/\* 00-multus\.conf\s+LOADED/);
    expect(io.out).toMatch(/10-calico\.conflist\s+not considered \(beyond max_conf_num 1\)/);
    expect(io.out).toContain('NOT VERIFIED (mesh_plugin_missing)');
    expect(io.out).toContain("Multus:      multus runs the pod's network from delegates[0]");
    expect(io.out).toContain('Chain:       flannel');
    // Multus' file is the node's pod network: the advice is never to delete it.
    expect(io.out).toContain('What to do:  Keep Multus’ file: Multus runs its delegates[0]');
    expect(io.out).not.toMatch(/What to do:.*\b(remove|delete)\b/i);
  });

  it('without Multus the advice for a missing plugin warns before deleting anything', async () => {
    const io = memoryIO();
    expect(await checkNodeCommand(layout({ '10-calico.conflist': 'corpus:istio__calico.conflist' }), io)).toBe(1);
    expect(io.out).toContain('What to do:  Let the mesh CNI installer add its plugin to the file listed');
    expect(io.out).toContain('Do not delete the file listed without knowing whose it is');
  });

  it('--runtime crio skips what CRI-O skips', async () => {
    const io = memoryIO();
    const argv = layout({
      '00-broken.conf': 'corpus:istio__non_json.conf',
      '10-calico.conflist': 'corpus:istio__10-calico.conflist-istioconfig',
    });
    expect(await checkNodeCommand([...argv, '--runtime', 'crio'], io)).toBe(0);
    expect(io.out).toMatch(/00-broken\.conf\s+does not parse \(error parsing configuration: invalid character/);
    const containerd = memoryIO();
    expect(await checkNodeCommand(argv, containerd)).toBe(1);
    expect(containerd.out).toContain('(unparsable_first_file)');
  });

  it('--output json prints the Verdict', async () => {
    const io = memoryIO();
    expect(
      await checkNodeCommand(
        [...layout({ '10-calico.conflist': 'corpus:istio__calico.conflist' }), '--output', 'json'],
        io,
      ),
    ).toBe(1);
    const verdict = JSON.parse(io.out);
    expect(verdict).toMatchObject({
      verified: false,
      reason: 'mesh_plugin_missing',
      evidence: {
        runtime: 'containerd',
        pluginType: 'istio-cni',
        file: '10-calico.conflist',
        plugins: ['calico', 'portmap'],
      },
    });
    expect(verdict.evidence.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a missing conf dir is a verdict (exit 1); an unreadable one an I/O error (exit 2)', async () => {
    const base = layout({});
    const missing = memoryIO();
    expect(await checkNodeCommand([...base, '--cni-conf-dir', join(dirs.root, 'absent')], missing)).toBe(1);
    expect(missing.out).toContain('(no_config)');
    const notADir = memoryIO();
    expect(await checkNodeCommand([...base, '--cni-conf-dir', dirs.bin('calico')], notADir)).toBe(2);
    expect(notADir.err).toMatch(/cannot read .*ENOTDIR/);
  });

  it.each([
    { argv: [], err: /--plugin-type is required/ },
    { argv: ['--plugin-type', 'istio-cni', '--runtime', 'docker'], err: /--runtime must be one of containerd, crio/ },
    {
      argv: ['--plugin-type', 'istio-cni', '--runtime', 'docker://24.0.7'],
      err: /not a containerd:\/\/ or cri-o:\/\//,
    },
    { argv: ['--plugin-type', 'istio-cni', '--libcni', '2.0'], err: /--libcni must be auto or one of 1.1, 1.2, 1.3/ },
    { argv: ['--plugin-type', 'istio-cni', '--max-conf-num', '-1'], err: /--max-conf-num/ },
    { argv: ['--plugin-type', 'istio-cni', '--output', 'yaml'], err: /--output must be text or json/ },
    { argv: ['--plugin-type', 'istio-cni', '--bogus'], err: /bogus/ },
  ])('usage error $argv → exit 2', async ({ argv, err }) => {
    const io = memoryIO();
    expect(await checkNodeCommand(argv, io)).toBe(2);
    expect(io.err).toMatch(err);
    expect(io.err).toContain('usage: meshgate check-node');
  });

  describe('a dir the libcni lines read differently, judged by the runtime named', () => {
    const lineSplit = () => layout(LINE_SPLIT_DIR, ['bridge', 'istio-cni']);

    it.each([
      ['cri-o://1.30.2', 1, 'NOT VERIFIED (mesh_plugin_missing)', 'libcni:     1.1 (cri-o://1.30.2)'],
      ['cri-o://1.31.2', 0, 'VERIFIED (verified)', 'libcni:     1.2 (cri-o://1.31.2)'],
      ['containerd://1.7.27', 1, 'NOT VERIFIED (unparsable_first_file)', 'libcni:     1.1 (containerd://1.7.27)'],
      ['containerd://2.1.4', 0, 'VERIFIED (verified)', 'libcni:     1.3 (containerd://2.1.4)'],
    ])('--runtime %s → exit %i', async (runtime, code, verdict, line) => {
      const io = memoryIO();
      expect(await checkNodeCommand([...lineSplit(), '--runtime', runtime], io)).toBe(code);
      expect(io.out).toContain(verdict);
      expect(io.out).toContain(line);
    });

    it('without a version every line must agree: exit 1, and what each line loads is shown', async () => {
      const io = memoryIO();
      expect(await checkNodeCommand([...lineSplit(), '--runtime', 'crio'], io)).toBe(1);
      expect(io.out).toContain('NOT VERIFIED (libcni_lines_disagree)');
      expect(io.out).toContain("libcni:     every line (1.1, 1.2, 1.3): the runtime's is not known");
      expect(io.out).toContain('  1.1  mesh_plugin_missing (20-plain.conflist: bridge)');
      expect(io.out).toContain('  1.2  verified (10-meshed.conflist: bridge → istio-cni)');
    });

    it('--libcni names the line; the JSON evidence records it', async () => {
      const io = memoryIO();
      expect(
        await checkNodeCommand([...lineSplit(), '--runtime', 'crio', '--libcni', '1.3', '--output', 'json'], io),
      ).toBe(0);
      expect(JSON.parse(io.out).evidence).toMatchObject({ runtime: 'crio', libcni: '1.3', file: '10-meshed.conflist' });
    });
  });

  it('is wired into the meshgate command table', async () => {
    const io = memoryIO();
    expect(await main(['check-node', '--help'], io)).toBe(0);
    expect(io.out).toContain('usage: meshgate check-node');
  });
});
