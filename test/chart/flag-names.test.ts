// Chart values and the daemons' flags carry the same names: every value the chart passes to `serve`, `node-agent` or
// `repair-controller` as a flag is that flag, kebab-cased — by its own key (webhook.drainSeconds → --drain-seconds),
// or with the key of the group holding it (repairController.quarantine.failures → --quarantine-failures), a list
// by its singular, repeated (nodeAgent.cniBinDirs → --cni-bin-dir). Each flag exists in the command table
// (src/cli/commands.ts), and every other flag the chart renders is one the chart derives, listed below with why.
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.ts';
import { render, type Obj } from './helm.ts';
import { profileValues } from './profiles.ts';

type Daemon = 'serve' | 'node-agent' | 'repair-controller';

/** Values passed as flags, with a value each unlike its default, so the flag is seen to carry it. */
const VALUES: Record<Daemon, { root: string; values: Obj }> = {
  serve: {
    root: 'webhook',
    values: { port: 9443, logLevel: 'debug', drainSeconds: 7, timeoutSeconds: 12 },
  },
  'node-agent': {
    root: 'nodeAgent',
    values: {
      runtime: 'crio',
      maxConfNum: 2,
      cniConfDir: '/etc/cni/conf.d',
      cniBinDirs: ['/opt/cni/bin', '/usr/libexec/cni'],
      resync: '7m',
      taintUnverified: true,
      proxyGuard: { interval: '3s' },
      port: 9479,
    },
  },
  'repair-controller': {
    root: 'repairController',
    values: {
      maxDeletesPerMinute: 11,
      dryRun: true,
      withdrawVerdicts: true,
      quarantine: {
        failures: 4,
        window: '11m',
        taint: true,
        holdOff: '6m',
        maxHoldOff: '2h',
        maxWithdrawalsPerHour: 4,
        interval: '11s',
        probe: { timeout: '3m', proxyImage: 'docker.io/library/busybox:1.36' },
      },
      unmeshedPods: 'evict',
      maxEvictionsPerMinute: 12,
      unmeshedSweepInterval: '6m',
      policyReports: false,
      port: 9091,
      logLevel: 'debug',
      leaderElection: { leaseDuration: '16s', renewDeadline: '11s', retryPeriod: '3s' },
    },
  },
};

/** Flags the chart computes rather than copies from a value of the same name. */
const DERIVED: Record<Daemon, Record<string, string>> = {
  serve: {
    config: 'the ConfigMap mounted at /etc/meshgate/config',
    'tls-san': "the Service's DNS names",
    'cert-secret': 'certs.mode self-managed: <fullname>-tls',
    'webhook-config': 'certs.mode self-managed: the webhook configurations, named <fullname>',
    'mark-key-dir': "the admission mark Secret's mount",
    'mark-key-secret': 'admissionMark.secretName (default <fullname>-admission-mark), only with admissionMark.create',
  },
  'node-agent': {
    config: 'the ConfigMap mounted at /etc/meshgate/config',
    host: "$(POD_IP): the node's own address",
    'proxy-guard': 'nodeAgent.proxyGuard.enabled (the guard on; its group names the flag)',
    'node-lease-namespace': "the release namespace: where the agents' Leases (their heartbeats) live",
  },
  'repair-controller': {
    config: 'the ConfigMap mounted at /etc/meshgate/config',
    'mark-key-dir': "the admission mark Secret's mount",
    'lease-name': '<fullname>-repair-controller',
    'webhook-config': 'the webhook configurations, named <fullname>, whose selectors say which namespaces opted in',
  },
};

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Every leaf value with its path under the workload's key. */
function leaves(v: Obj, path: string[] = []): Array<{ path: string[]; value: unknown }> {
  return Object.entries(v).flatMap(([k, x]) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? leaves(x as Obj, [...path, k])
      : [{ path: [...path, k], value: x }],
  );
}

/** The flag names a value may have under the rule: its key, or its group's key and its own; lists singular. */
function candidates(path: string[], value: unknown): string[] {
  const leaf = kebab(path[path.length - 1]);
  const names = [leaf, ...(path.length > 1 ? [`${kebab(path[path.length - 2])}-${leaf}`] : [])];
  return Array.isArray(value) ? names.map((n) => n.replace(/s$/, '')) : names;
}

const containerArgs = (r: Obj, kind: string, name: string): string[] =>
  r.one(kind, name).spec.template.spec.containers[0].args;

const WORKLOADS: Record<Daemon, [string, string]> = {
  serve: ['Deployment', 'meshgate'],
  'node-agent': ['DaemonSet', 'meshgate-node-agent'],
  'repair-controller': ['Deployment', 'meshgate-repair-controller'],
};

describe('values and the daemons’ flags agree', () => {
  const rendered = render(
    profileValues('istio', Object.fromEntries(Object.values(VALUES).map(({ root, values }) => [root, values])) as Obj),
  );

  it.each(Object.keys(VALUES) as Daemon[])('%s: each value reaches the flag of its name', async (daemon) => {
    const [kind, name] = WORKLOADS[daemon];
    const args = containerArgs(await rendered, kind, name);
    expect(args[0]).toBe(daemon);
    const declared = new Set(Object.keys(COMMANDS[daemon].flags));
    for (const { path, value } of leaves(VALUES[daemon].values)) {
      const key = `${VALUES[daemon].root}.${path.join('.')}`;
      const names = candidates([VALUES[daemon].root, ...path], value).filter((n) =>
        args.some((a) => a === `--${n}` || a.startsWith(`--${n}=`)),
      );
      expect(names, `${key}: no flag named after it in ${args.join(' ')}`).toHaveLength(1);
      const flag = names[0];
      expect(declared.has(flag), `--${flag} (from ${key}) is not a flag of meshgate ${daemon}`).toBe(true);
      const given = args.filter((a) => a === `--${flag}` || a.startsWith(`--${flag}=`)).map((a) => a.split('=')[1]);
      const want = Array.isArray(value)
        ? value.map(String)
        : [value === true && given[0] === undefined ? undefined : String(value)];
      expect(given, key).toEqual(want);
    }
  });

  it.each(Object.keys(VALUES) as Daemon[])(
    '%s: every other flag the chart renders is derived, and exists',
    async (daemon) => {
      const [kind, name] = WORKLOADS[daemon];
      const args = containerArgs(await rendered, kind, name).slice(1);
      const fromValues = new Set(
        leaves(VALUES[daemon].values).flatMap(({ path, value }) => candidates([VALUES[daemon].root, ...path], value)),
      );
      const declared = new Set(Object.keys(COMMANDS[daemon].flags));
      for (const a of args) {
        const flag = a.slice(2).split('=')[0];
        expect(declared.has(flag), `the chart passes --${flag}, which meshgate ${daemon} does not have`).toBe(true);
        expect(fromValues.has(flag) || flag in DERIVED[daemon], `--${flag}: from which value?`).toBe(true);
      }
    },
  );

  it('the rule can fail: a value passed under another name is caught', () => {
    expect(candidates(['quarantine', 'failures'], 3)).toEqual(['failures', 'quarantine-failures']);
    expect(candidates(['quarantine', 'failures'], 3)).not.toContain('withdraw-after');
    expect(candidates(['cniBinDirs'], ['/a'])).toEqual(['cni-bin-dir']);
  });
});
