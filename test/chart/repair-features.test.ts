// The chart's switches for the repair controller's node quarantine (repairController.withdrawVerdicts) and
// unmeshed-pod handling (repairController.unmeshedPods): the flags the Deployment passes (each one the CLI knows),
// the RBAC each adds and no more, and the admission policies that narrow what RBAC cannot — the probe pods it may
// create and delete, the namespaces it may evict in (a label selector rendered into CEL, checked here against the
// selector evaluator `meshgate check` uses). Their behaviour on a real apiserver: test/e2e/repair-*.test.ts.
import { describe, expect, it } from 'vitest';
import { matchesSelector } from '../../src/util/selector.ts';
import { QUARANTINE_FLAGS } from '../../src/repair/flags.ts';
import { helmWithValues, render, templateArgs, type Obj } from './helm.ts';
import { profileValues } from './profiles.ts';

const args = (r: Obj) =>
  r.one('Deployment', 'meshgate-repair-controller').spec.template.spec.containers[0].args as string[];
const flagNames = (a: string[]) => a.filter((x) => x.startsWith('--')).map((x) => x.slice(2).split('=')[0]);

describe('repair controller: node quarantine and unmeshed pods', () => {
  it('by default: no quarantine, unmeshed pods reported (Events only), no eviction rights, no extra policies', async () => {
    const r = await render(profileValues('istio'));
    expect(args(r)).toEqual(
      expect.arrayContaining(['--unmeshed-pods=report', '--webhook-config=meshgate', '--unmeshed-sweep-interval=5m']),
    );
    expect(args(r).join(' ')).not.toMatch(/withdraw|quarantine|=evict/);
    const rules = JSON.stringify(r.one('ClusterRole', 'meshgate-repair-controller').rules);
    expect(rules).not.toContain('pods/eviction');
    expect(rules).not.toContain('"nodes"');
    expect(
      r
        .all('ValidatingAdmissionPolicy')
        .map((p) => p.metadata.name)
        .filter((n) => /-(probes|evictions)$/.test(n)),
    ).toEqual([]);
  });

  it('withdrawVerdicts: every quarantine value becomes a flag the CLI knows; nodes, probe pods and their policy', async () => {
    const r = await render(
      profileValues('istio', {
        repairController: {
          withdrawVerdicts: true,
          unmeshedPods: 'evict',
          quarantine: {
            failures: 5,
            window: '15m',
            taint: true,
            holdOff: '2m',
            maxHoldOff: '30m',
            maxWithdrawalsPerHour: 2,
            interval: '30s',
            probe: { proxyImage: 'registry.local/proxyv2:1.27.0', timeout: '90s' },
          },
        },
      }),
    );
    const a = args(r);
    expect(a).toEqual(
      expect.arrayContaining([
        '--withdraw-verdicts=true',
        '--quarantine-failures=5',
        '--quarantine-window=15m',
        '--quarantine-taint=true',
        '--hold-off=2m',
        '--max-hold-off=30m',
        '--max-withdrawals-per-hour=2',
        '--quarantine-interval=30s',
        '--probe-timeout=90s',
        '--probe-proxy-image=registry.local/proxyv2:1.27.0',
        '--unmeshed-pods=evict',
        '--max-evictions-per-minute=10',
      ]),
    );
    for (const f of flagNames(a).filter(
      (f) =>
        ![
          'config',
          'mark-key-dir',
          'lease-name',
          'lease-duration',
          'renew-deadline',
          'retry-period',
          'max-deletes-per-minute',
          'port',
          'log-level',
        ].includes(f),
    )) {
      expect(Object.keys(QUARANTINE_FLAGS), f).toContain(f);
    }
    expect(r.one('Role', 'meshgate-repair-controller').rules).toContainEqual({
      apiGroups: [''],
      resources: ['pods'],
      verbs: ['create'],
    });
    const probes = r.one('ValidatingAdmissionPolicy', 'meshgate-repair-controller-probes');
    expect(probes.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
    ]);
    const text = JSON.stringify(probes.spec);
    expect(text).toContain('ghcr.io/meshgate/meshgate:0.1.0');
    expect(text).toContain('registry.local/proxyv2:1.27.0');
    expect(text).toContain('automountServiceAccountToken == optional.of(false)');
    expect(
      r.one('ValidatingAdmissionPolicyBinding', 'meshgate-repair-controller-probes').spec.validationActions,
    ).toEqual(['Deny']);
    // The delete policy lets it remove its own probes (and still only failed meshgate pods elsewhere).
    expect(JSON.stringify(r.one('ValidatingAdmissionPolicy', 'meshgate-repair-controller').spec)).toContain(
      'request.namespace == \\"meshgate\\"',
    );
  });

  it('unmeshedPods evict: pods/eviction create, and a policy that evicts only where the webhooks select', async () => {
    const r = await render(profileValues('linkerd', { repairController: { unmeshedPods: 'evict' } }));
    expect(r.one('ClusterRole', 'meshgate-repair-controller').rules).toContainEqual({
      apiGroups: [''],
      resources: ['pods/eviction'],
      verbs: ['create'],
    });
    const p = r.one('ValidatingAdmissionPolicy', 'meshgate-repair-controller-evictions');
    expect(p.spec.matchConstraints.resourceRules[0].resources).toEqual(['pods/eviction']);
    expect(p.spec.validations[0].expression).toContain(
      'request.namespace in ["meshgate","kube-system","kube-public","kube-node-lease"]',
    );
    expect(p.spec.validations[1].expression).toContain("variables.labels['meshgate.io/inject'] in ['enabled']");
  });

  it('the selector rendered into CEL selects what the apiserver’s selector does (each operator)', async () => {
    const selector = {
      matchLabels: { team: 'shop' },
      matchExpressions: [
        { key: 'meshgate.io/inject', operator: 'In', values: ['enabled', 'yes'] },
        { key: 'tier', operator: 'NotIn', values: ['batch'] },
        { key: 'istio.io/rev', operator: 'DoesNotExist' },
        { key: 'owner', operator: 'Exists' },
      ],
    };
    const r = await render(
      profileValues('istio', {
        repairController: { unmeshedPods: 'evict' },
        webhook: { selectors: [{ name: 'custom', namespaceSelector: selector }] },
      }),
    );
    const cel = r.one('ValidatingAdmissionPolicy', 'meshgate-repair-controller-evictions').spec.validations[1]
      .expression as string;
    const cases: Array<Record<string, string>> = [
      { team: 'shop', 'meshgate.io/inject': 'enabled', owner: 'x' },
      { team: 'shop', 'meshgate.io/inject': 'yes', owner: 'x', tier: 'web' },
      { team: 'shop', 'meshgate.io/inject': 'enabled', owner: 'x', tier: 'batch' },
      { team: 'shop', 'meshgate.io/inject': 'enabled', owner: 'x', 'istio.io/rev': 'canary' },
      { team: 'shop', 'meshgate.io/inject': 'enabled' },
      { team: 'web', 'meshgate.io/inject': 'enabled', owner: 'x' },
      { 'meshgate.io/inject': 'disabled', team: 'shop', owner: 'x' },
    ];
    for (const labels of cases) {
      const withName = { 'kubernetes.io/metadata.name': 'app', ...labels };
      expect(evalCel(cel, withName), JSON.stringify(labels)).toBe(matchesSelector(selector, labels));
    }
  });

  it('the schema refuses an unknown unmeshedPods mode and a duration that is none', async () => {
    for (const [values, where] of [
      [{ unmeshedPods: 'delete' }, 'unmeshedPods'],
      [{ quarantine: { window: '10' } }, 'window'],
    ] as const) {
      const res = await helmWithValues(templateArgs(), profileValues('istio', { repairController: values }));
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain(where);
    }
  });
});

/**
 * The rendered CEL, evaluated for a labels map by turning it into JavaScript: it uses only `'k' in L`, `L['k']`,
 * `x in [..]`, `==`, `!`, `&&`, `||` and parentheses, which map one to one (and nothing else is accepted here).
 */
function evalCel(cel: string, labels: Record<string, string>): boolean {
  const js = cel
    .replace(
      /variables\.labels\['([^']+)'\] in (\[[^\]]*\])/g,
      (_m, k, list) => `${list}.includes(L[${JSON.stringify(k)}])`,
    )
    .replace(/'([^']+)' in variables\.labels/g, (_m, k) => `Object.hasOwn(L, ${JSON.stringify(k)})`)
    .replace(/variables\.labels\['([^']+)'\]/g, (_m, k) => `L[${JSON.stringify(k)}]`)
    .replace(/==/g, '===');
  if (/variables|[^=!]=[^=]/.test(js.replace(/===/g, ''))) throw new Error(`unexpected CEL: ${cel}`);
  return new Function('L', `return (${js.replace(/'/g, '"')});`)(labels) as boolean;
}
