// `meshgate repair-controller` flags: usage errors exit 2 before anything connects.
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { repairControllerCommand } from '../../src/cli/repair-controller.ts';
import { rewriteDeprecatedFlags } from '../../src/repair/flags.ts';

describe('repair-controller flags', () => {
  it.each([
    [['--mesh', 'istio', '--max-deletes-per-minute', '0'], /--max-deletes-per-minute: "0" is not a positive integer/],
    [['--mesh', 'istio', '--leader-elect', 'yes'], /--leader-elect: "yes" is not true or false/],
    [['--mesh', 'istio', '--port', '70000'], /--port: "70000" is not a port/],
    [['--mesh', 'istio', '--lease-duration', '15'], /--lease-duration: "15" is not a duration/],
    [['--mesh', 'istio', '--renew-deadline', '20s'], /--retry-period < --renew-deadline < --lease-duration must hold/],
    [['--mesh', 'istio', '--retry-period', '10s'], /--retry-period < --renew-deadline < --lease-duration must hold/],
    [['--mesh', 'consul', '--kubeconfig', '/nonexistent'], /mesh: required: one of istio, linkerd, custom/],
    [['--mesh', 'istio'], /no cluster credentials: pass --kubeconfig or run in a cluster/],
    [['--mesh', 'istio', '--withdraw-verdicts', 'yes'], /--withdraw-verdicts: "yes" is not true or false/],
    [
      ['--mesh', 'istio', '--withdraw-verdicts=true', '--quarantine-failures', '0'],
      /--quarantine-failures: "0" is not a whole number >= 1/,
    ],
    [
      ['--mesh', 'istio', '--withdraw-verdicts=true', '--hold-off', '10m', '--max-hold-off', '5m'],
      /--max-hold-off \(5m\) must be at least --hold-off \(10m\)/,
    ],
    [
      ['--mesh', 'istio', '--withdraw-verdicts=true', '--quarantine-window', 'soon'],
      /--quarantine-window: "soon" is not a duration/,
    ],
    [
      ['--mesh', 'istio', '--withdraw-verdicts=true', '--probe-namespace', 'Probes_NS'],
      /--probe-namespace: "Probes_NS" is not a namespace name/,
    ],
    [['--mesh', 'istio', '--unmeshed-pods', 'maybe'], /--unmeshed-pods: "maybe" is not one of off, report, evict/],
    [['--mesh', 'istio', '--evict-unmeshed', 'maybe'], /--evict-unmeshed: "maybe" is not true or false/],
    [
      ['--mesh', 'istio', '--unmeshed-pods=evict', '--max-evictions-per-minute', '0'],
      /--max-evictions-per-minute: "0" is not a whole number >= 1/,
    ],
  ])('%j → exit 2', async (argv, err) => {
    const io = memoryIO('', {});
    expect(await repairControllerCommand(['--mark-key-dir', '/etc/meshgate/admission-mark', ...argv], io)).toBe(2);
    expect(io.err).toMatch(err);
  });

  it('without --mark-key-dir → exit 2: it could trust no pod', async () => {
    const io = memoryIO('', {});
    expect(await repairControllerCommand(['--mesh', 'istio', '--kubeconfig', '/nonexistent'], io)).toBe(2);
    expect(io.err).toMatch(
      /--mark-key-dir is required: the repair controller acts only on pods whose admission mark verifies/,
    );
  });

  it('documents every flag, and is wired into the meshgate command table', async () => {
    const io = memoryIO();
    expect(await main(['repair-controller', '--help'], io)).toBe(0);
    for (const flag of [
      '--config',
      '--mesh',
      '--mark-key-dir DIR',
      '--leader-elect',
      '--lease-name',
      '--lease-duration',
      '--renew-deadline',
      '--retry-period',
      '--port',
      '--dry-run',
      '--withdraw-verdicts BOOL',
      '--quarantine-failures N',
      '--hold-off DURATION',
      '--max-withdrawals-per-hour N',
      '--probe-proxy-image IMAGE',
      '--unmeshed-pods MODE',
      '--webhook-config NAME',
    ]) {
      expect(io.out).toContain(flag);
    }
    expect(io.out).toContain('exit 42');
    expect(io.out).toContain('126');
  });
});

describe('flag names of earlier releases', () => {
  it.each([
    [['--withdraw-after', '5'], ['--quarantine-failures=5']],
    [
      ['--withdraw-window=15m', '--withdraw-taint=true'],
      ['--quarantine-window=15m', '--quarantine-taint=true'],
    ],
    [['--evict-unmeshed=true'], ['--unmeshed-pods=evict']],
    [
      ['--report-unmeshed', 'true', '--port', '9090'],
      ['--port', '9090', '--unmeshed-pods=report'],
    ],
    [['--evict-unmeshed=true', '--report-unmeshed=true'], ['--unmeshed-pods=evict']],
    [['--report-unmeshed=true', '--evict-unmeshed=true'], ['--unmeshed-pods=evict']],
    [['--evict-unmeshed=false'], []],
    [['--quarantine-failures=4'], ['--quarantine-failures=4']],
  ])('%j → %j, with a warning naming the new flag', (argv, want) => {
    const r = rewriteDeprecatedFlags(argv);
    expect(r.argv).toEqual(want);
    if (argv.some((a) => /withdraw-after|withdraw-window|unmeshed=|unmeshed$/.test(a)))
      expect(r.warnings.join('\n')).toMatch(/is deprecated: use --(quarantine-|unmeshed-pods)/);
    else expect(r.warnings).toEqual([]);
  });
});
