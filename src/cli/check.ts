/**
 * `meshgate check`: meshgate in a cluster, read-only, through the Kubernetes API (src/check/). This file is the
 * edge: flags, kubeconfig and environment are read here, the configuration is found once (--config, --mesh, or
 * the chart's ConfigMap), and exit codes are decided: 0 no check failed, 1 a check failed, 2 usage,
 * configuration or connection error (never a stack trace).
 */
import { parse as parseYaml } from 'yaml';
import { compileConfig } from '../config/compile.ts';
import { PROFILE_DEFAULTS } from '../config/defaults.ts';
import { buildConfig, ConfigError, loadConfig } from '../config/load.ts';
import { KubeReader } from '../check/kube-reader.ts';
import { ConnectionError } from '../check/read-errors.ts';
import { isReadError } from '../check/facts.ts';
import { MeshReader } from '../check/mesh-reader.ts';
import { runPreflight } from '../check/preflight.ts';
import { renderJson, renderTable } from '../check/render.ts';
import { auditReport, CHECKS, EXIT, exitCode, type InstalledNames } from '../check/report.ts';
import { runCheck, type CheckProgress } from '../check/run.ts';
import { Progress } from './progress.ts';
import { probeTls } from '../check/tls-probe.ts';
import type { WebhookEndpoint } from '../check/judge-webhook.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import { COMMANDS } from './commands.ts';
import type { CliIO } from './io.ts';
import { kubeConfig } from './kubeconfig.ts';

/** The chart's defaults: release "meshgate" in namespace "meshgate" (charts/meshgate/templates/_helpers.tpl). */
const DEFAULT_NAME = 'meshgate';
const DEFAULT_NAMESPACE = 'meshgate';
/** The key of the chart's ConfigMap that holds meshgate's config file. */
const CONFIG_KEY = 'config.yaml';

const width = Math.max(...Object.keys(CHECKS).map((c) => c.length));
const USAGE = `usage: meshgate check [flags]

Checks meshgate in a cluster, read-only, through the Kubernetes API (like linkerd check): the webhook
configurations and their endpoints, the caBundle against the serving certificate and its expiry, the node agent on
every node and each Node's verdict, the mesh CNI plugin the nodes were checked for, the opted-in namespaces, and
the pods there that run without meshgate's redirect, with the command that restarts them, each namespace's
enforcement level and what audit and warn levels admitted that enforce would refuse.

  --audit   only the audit report: each guarded namespace's level (meshgate.io/enforcement), and the pods that
            were admitted below enforce or that enforce would refuse, by namespace, owner and reason, with what to
            fix; promote a namespace once it lists nothing
  --pre     before installing (read-only): the Kubernetes version and features meshgate needs, the mesh found
            (versions, revisions, the images it injects), the nodes' container runtimes and libcni lines, the
            namespaces the chart would guard and at which level, and the existing pods that would be refused or
            adjusted when recreated, by reason. Takes --mesh, or --config with a meshgate config file (mesh
            and the keys of the chart values' config)

flags:
  --kubeconfig FILE      kubeconfig (default: $KUBECONFIG's first file, else ~/.kube/config, else in-cluster)
  --context NAME         kubeconfig context (default: its current context)
  -n, --namespace NS     meshgate's namespace (default: the config's meshNamespace, else ${DEFAULT_NAMESPACE})
  --config FILE          meshgate configuration (default: key ${CONFIG_KEY} of the chart's ConfigMap NAME in NS)
  --mesh NAME            instead of a configuration: a mesh profile's defaults (istio | linkerd)
  --name NAME            the chart's full name: the release name when it contains "meshgate", else
                         RELEASE-meshgate (default ${DEFAULT_NAME}); names the objects below
  --webhook-config NAME  both webhook configurations (default NAME)
  --node-agent NAME      the node agent DaemonSet (default NAME-node-agent)
  --tls-secret NAME      the Secret with the serving certificate (default NAME-tls)
  -o, --output FORMAT    table | json (default table)

The repair controller is the Deployment NAME-repair-controller. The serving certificate is read from a TLS
handshake with a URL webhook, or with the Service when run inside the cluster, else from the Secret.

exit codes: 0 no check failed (warnings allowed), 1 a check failed, 2 usage, configuration or connection error

checks:
${Object.entries(CHECKS)
  .map(([code, c]) => `  ${code.padEnd(width)}  ${c.verifies}`)
  .join('\n')}

examples:
  meshgate check
  meshgate check --context prod -n mesh-system --name mg
  meshgate check -o json | jq '.results[] | select(.status == "fail")'
  meshgate check --pre --mesh istio
  meshgate check --audit -o json | jq '.results[] | select(.code == "pods_would_be_refused") | .items'
`;

type Flags = ReturnType<typeof parseFlags<(typeof COMMANDS)['check']['flags']>>['values'];

export async function checkCommand(argv: string[], io: CliIO): Promise<number> {
  let f: Flags;
  try {
    f = parseFlags(argv, COMMANDS.check.flags).values;
    if (f.help) {
      io.stdout(USAGE);
      return EXIT.ok;
    }
    if (f.output !== undefined && f.output !== 'table' && f.output !== 'json')
      throw new UsageError(`--output must be table or json, not "${f.output}"`);
    if (f.config && f.mesh) throw new UsageError('--config and --mesh go alone: the file names its mesh');
    if (f.audit && f.pre) throw new UsageError('--audit and --pre go alone: --pre runs before meshgate is installed');
  } catch (err) {
    io.stderr(`meshgate check: ${(err as Error).message}\n\n${USAGE}`);
    return EXIT.error;
  }
  try {
    const { kc, inCluster } = kubeConfig(f, io.env);
    const reader = new KubeReader(kc);
    const server = await reader.serverVersion();
    const found = await findConfig(f, reader);
    const names: InstalledNames = {
      namespace: found.namespace,
      webhookConfig: f['webhook-config'] ?? found.name,
      nodeAgent: f['node-agent'] ?? `${found.name}-node-agent`,
      tlsSecret: f['tls-secret'] ?? `${found.name}-tls`,
      repairController: `${found.name}-repair-controller`,
    };
    const report = f.pre
      ? await runPreflight(reader, new MeshReader(kc, reader), {
          cfg: found.cfg,
          names,
          configSource: found.source,
          now: Date.now,
          server,
        })
      : await withProgress(io, (onProgress) =>
          runCheck(reader, {
            cfg: found.cfg,
            names,
            configSource: found.source,
            meshPlugins: Object.values(PROFILE_DEFAULTS).map((p) => p.cni.pluginType),
            // The audit report needs no certificate: nothing is dialled.
            probe: (e) => (f.audit ? undefined : probeFor(e, inCluster)),
            now: Date.now,
            server,
            audit: f.audit,
            onProgress,
          }),
        ).then((r) => (f.audit ? auditReport(r) : r));
    io.stdout(f.output === 'json' ? renderJson(report) : renderTable(report));
    return exitCode(report);
  } catch (err) {
    const known = err instanceof UsageError || err instanceof ConfigError || err instanceof ConnectionError;
    const message = known
      ? (err as Error).message
      : `internal error: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
    io.stderr(`meshgate check: ${message.split('\n').slice(0, 12).join('\n')}\n`);
    return EXIT.error;
  }
}

/**
 * A large cluster takes a while to read: on a terminal, one line on stderr redrawn in place (after the first
 * PROGRESS_AFTER_MS, src/cli/progress.ts) says how many Nodes and pods were read so far. Nothing elsewhere: stdout
 * holds only the report.
 */
async function withProgress<T>(
  io: CliIO,
  run: (onProgress: ((p: CheckProgress) => void) | undefined) => Promise<T>,
): Promise<T> {
  if (!io.stderrIsTTY) return run(undefined);
  let last: CheckProgress | undefined;
  const n = (x: number) => x.toLocaleString('en-US');
  const progress = new Progress({
    name: 'check',
    write: (t) => io.stderr(t),
    tty: true,
    describe: () =>
      last
        ? `${n(last.nodes)} Nodes, ${n(last.pods)} pods read` +
          (last.namespaces.of ? ` (${n(last.namespaces.done)} of ${n(last.namespaces.of)} namespaces)` : '')
        : 'reading',
  });
  try {
    return await run((p) => {
      last = p;
      progress.tick();
    });
  } finally {
    progress.end();
  }
}

/** The configuration: --config, --mesh (in namespace -n), or the chart's ConfigMap in -n. */
async function findConfig(f: Flags, reader: KubeReader) {
  const name = f.name ?? DEFAULT_NAME;
  if (f.config) {
    const config = loadConfig(f.config);
    return {
      cfg: compileConfig(config),
      namespace: f.namespace ?? config.meshNamespace,
      name,
      source: `file ${f.config}`,
    };
  }
  const namespace = f.namespace ?? DEFAULT_NAMESPACE;
  if (f.mesh) {
    const cfg = compileConfig(buildConfig({ mesh: f.mesh, meshNamespace: namespace }, '--mesh'));
    return { cfg, namespace, name, source: `the ${f.mesh} profile's defaults (--mesh)` };
  }
  const where = `ConfigMap ${namespace}/${name}`;
  const text = await reader.configMapKey(namespace, name, CONFIG_KEY);
  if (text === undefined)
    throw new UsageError(
      `${where} not found: pass --config FILE or --mesh NAME, or -n/--name where meshgate is installed`,
    );
  if (isReadError(text)) throw new UsageError(`${where}: ${text.error}; pass --config FILE or --mesh NAME`);
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${where} key ${CONFIG_KEY}`, [`not valid YAML: ${(err as Error).message.split('\n')[0]}`]);
  }
  return { cfg: compileConfig(buildConfig(raw, `${where} key ${CONFIG_KEY}`)), namespace, name, source: where };
}

/**
 * Whom to dial for the served certificate: a URL webhook's host (the apiserver dials it too), and a Service's DNS
 * name only from inside the cluster; from outside, Service names do not resolve and pod IPs are not routed.
 */
function probeFor(e: WebhookEndpoint, inCluster: boolean) {
  if (e.url) {
    const u = new URL(e.url);
    return probeTls(u.hostname.replace(/^\[|\]$/g, ''), Number(u.port || 443), e.host);
  }
  if (e.service && inCluster) return probeTls(e.host, e.service.port, e.host);
  return undefined;
}
