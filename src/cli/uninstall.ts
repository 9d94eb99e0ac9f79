/**
 * `meshgate uninstall`: removes what meshgate made at run time once its chart (or manifests) are gone
 * (src/uninstall/). The edge: flags, credentials and exit codes — 0 nothing of meshgate is left (or, with
 * --dry-run, the plan was printed), 1 it could not finish (still installed, pods that would not stop, an API
 * error), 2 usage error or no credentials. The chart's post-delete hook Job runs it (charts/meshgate, uninstall.*).
 */
import { parseDuration } from '../util/duration.ts';
import { describeKubeError } from '../kube/errors.ts';
import { kubeUninstallApi } from '../uninstall/kube-api.ts';
import { chartNames } from '../uninstall/plan.ts';
import { uninstall } from '../uninstall/run.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import { COMMANDS } from './commands.ts';
import type { CliIO } from './io.ts';
import { kubeConfig } from './kubeconfig.ts';

/** The chart's defaults: release "meshgate" in namespace "meshgate" (charts/meshgate/templates/_helpers.tpl). */
const DEFAULT_NAME = 'meshgate';
const DEFAULT_NAMESPACE = 'meshgate';
/** Long enough for a node agent's graceful stop (its terminationGracePeriodSeconds: 30 s) on a busy cluster. */
const DEFAULT_TIMEOUT = '2m';
/** How often the pods of meshgate's workloads are listed while waiting for them to go. */
const POLL_MS = 2_000;
/** Object names of the chart: DNS subdomains (RFC 1123). */
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const USAGE = `usage: meshgate uninstall [flags]

Removes what meshgate made at run time and its chart never knew, after the chart is gone (helm uninstall runs this
in a post-delete hook Job; with --no-hooks, or after deleting rendered manifests, run it yourself):
  - refuses while the webhook configurations NAME or the workloads NAME, NAME-node-agent, NAME-repair-controller
    still exist, and waits until their pods are gone;
  - deletes meshgate's own bare pods in NS (quarantine probe pods, a failed helm test pod NAME-test);
  - removes label meshgate.io/cni-verified, annotations meshgate.io/cni-evidence, meshgate.io/cni-quarantine and
    meshgate.io/cni-quarantine-history, condition MeshCNIVerified and taint meshgate.io/cni-unverified from
    every Node;
  - deletes Pending pods held by meshgate's verified-node affinity whose controller recreates them (without it
    now), and names those without a controller;
  - deletes the Secrets NAME-tls and the admission mark's, and the Lease NAME-repair-controller, when meshgate
    (or cert-manager, for meshgate's Certificate NAME-serving) made them; anything else is kept and named;
  - deletes meshgate's PolicyReports (named meshgate, label app.kubernetes.io/managed-by=meshgate);
  - keeps the namespaces' label meshgate.io/enforcement (your admins' levels: a reinstall starts each namespace at
    its level, as an upgrade would) and says so with the command that removes it; --remove-enforcement-labels
    removes it instead; names how many pods keep their record meshgate.io/would-deny.
Idempotent: run it again and it finds nothing.

flags:
  --kubeconfig FILE      kubeconfig (default: $KUBECONFIG's first file, else ~/.kube/config, else in-cluster)
  --context NAME         kubeconfig context (default: its current context)
  -n, --namespace NS     meshgate's namespace (default ${DEFAULT_NAMESPACE})
  --name NAME            the chart's full name: the release name when it contains "meshgate", else
                         RELEASE-meshgate (default ${DEFAULT_NAME})
  --mark-secret NAME     the admission mark's Secret (default NAME-admission-mark)
  --timeout DURATION     how long to wait for meshgate's pods to be gone (default ${DEFAULT_TIMEOUT})
  --remove-enforcement-labels
                         also remove the label meshgate.io/enforcement from every namespace, so that a
                         reinstall starts them all at its default level (default: keep them, and say so)
  --dry-run              print what would be removed; change nothing, wait for nothing

exit codes: 0 nothing of meshgate is left but what it names as kept (with --dry-run: the plan was printed), 1 it could not finish (meshgate
still installed, pods that would not stop, the API refused or was unreachable: the reason is printed; run it again),
2 usage error or no credentials

examples:
  helm uninstall meshgate -n meshgate      # runs meshgate uninstall in its post-delete hook
  meshgate uninstall --dry-run
  meshgate uninstall -n mesh-system --name mg --timeout 5m
`;

type Flags = ReturnType<typeof parseFlags<(typeof COMMANDS)['uninstall']['flags']>>['values'];

export async function uninstallCommand(argv: string[], io: CliIO): Promise<number> {
  let f: Flags;
  let timeoutMs: number;
  try {
    f = parseFlags(argv, COMMANDS.uninstall.flags).values;
    if (f.help) {
      io.stdout(USAGE);
      return 0;
    }
    for (const k of ['namespace', 'name', 'mark-secret'] as const) {
      const v = f[k];
      if (v !== undefined && (!NAME.test(v) || v.length > 253))
        throw new UsageError(`--${k}: "${v}" is not an object name`);
    }
    const t = parseDuration(f.timeout ?? DEFAULT_TIMEOUT);
    if (typeof t === 'string') throw new UsageError(`--timeout: ${t}`);
    timeoutMs = t;
  } catch (err) {
    io.stderr(`meshgate uninstall: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  let api: ReturnType<typeof kubeUninstallApi>;
  try {
    api = kubeUninstallApi(kubeConfig(f, io.env).kc);
  } catch (err) {
    io.stderr(`meshgate uninstall: ${(err as Error).message}\n`);
    return 2;
  }
  try {
    return await uninstall(api, {
      names: chartNames(f.namespace ?? DEFAULT_NAMESPACE, f.name ?? DEFAULT_NAME, f['mark-secret']),
      dryRun: f['dry-run'] === true,
      timeoutMs,
      removeEnforcementLabels: f['remove-enforcement-labels'] === true,
      pollMs: POLL_MS,
      out: (line) => io.stdout(`${line}\n`),
    });
  } catch (err) {
    // uninstall() reports the API's errors itself (exit 1); anything else is a fault of this program.
    io.stderr(`meshgate uninstall: internal error: ${describeKubeError(err)}\n`);
    return 1;
  }
}
