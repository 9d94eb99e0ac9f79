/**
 * `meshgate explain -f FILE [--node NAME] [--config FILE] [--node-state FILE]`: for each pod (template), in
 * words: inject or skip and why, the redirect mode and why, what would be rejected and why. Same core as the
 * webhook; `--node` evaluates the pods as if already bound to that node.
 */
import type { CliIO } from './io.ts';
import { OFFLINE_USAGE, runOffline } from './offline.ts';
import { COMMANDS } from './commands.ts';
import { parseArgs } from 'node:util';
import { loadConfig, buildConfig, ConfigError } from '../config/load.ts';
import { compileConfig, type Compiled } from '../config/compile.ts';
import { UsageError } from '../util/args.ts';
import { explainLive, OUTCOME_EXIT, renderExplained, withLearnedConfigMaps } from './explain-live.ts';
import { explainTemplate, simulationContext } from './explain-judge.ts';
import { injectorsOf, type MeshInjectors, readMeshConfigFile } from './explain-simulate.ts';
import { supportsNativeSidecars } from '../facts/node-facts.ts';
import { kubeConfig } from './kubeconfig.ts';
import { Progress } from './progress.ts';

const USAGE = `usage: meshgate explain -f FILE|- (--config FILE | --mesh NAME) [--node NAME] [--node-state FILE]
                        [--mesh-config FILE] [--progress]
       meshgate explain KIND/NAME... [-n NS] [--kubeconfig FILE] [--context NAME] [--config FILE | --mesh NAME]
                        [--meshgate-namespace NS] [-o text|json|yaml]

Says in words what meshgate would do with each pod (template), and why: offline from manifests (-f), or live from
the cluster (KIND/NAME: pod, deploy, sts, ds, rs, job, cronjob) with its Nodes' verdicts, the namespace's
enforcement level (meshgate.io/enforcement) and the images the mesh's own ConfigMaps name (config.learnImages).

A template the mesh's own injector has not injected yet (Istio, Linkerd) is first injected by a simulation of
that injector, made from the mesh's ConfigMaps (live: read from the cluster; offline: --mesh-config), then judged;
the answer says when a simulation was used and what it may differ in.

${OFFLINE_USAGE}  --node NAME          judge the pods as if already bound to this node
  --mesh-config FILE   the mesh's ConfigMaps, to simulate its injector (Istio: istio-sidecar-injector[-REV] and
                       istio[-REV]; Linkerd: linkerd-config), e.g. from
                       kubectl get cm -n istio-system istio-sidecar-injector istio -o yaml

live:
  -n, --namespace NS   the workloads' namespace (default: default)
  --kubeconfig FILE    kubeconfig (default: $KUBECONFIG's first file, else ~/.kube/config, else in-cluster)
  --context NAME       kubeconfig context
  --meshgate-namespace NS  where meshgate is installed: its configuration is key config.yaml of ConfigMap
                       meshgate there, unless --config or --mesh (default: meshgate)
  -o, --output FORMAT  text | json | yaml (default text)

exit codes: 5 one pod (template) refused, so CI can gate on it (like istioctl analyze); offline otherwise 0;
live otherwise 0 every object admitted as is, 3 one adjusted, 4 one admitted with a record of a refusal (its
namespace is below enforce); 1 the cluster or an input could not be read, 2 usage or configuration error

examples:
  meshgate explain --mesh istio --node-state nodes.yaml --node worker-1 -f deploy.yaml
  meshgate explain --mesh istio --mesh-config istio-cms.yaml -f deploy.yaml || echo refused
  meshgate explain deploy/web pod/web-6d9f-x2x7q -n shop -o json
`;

const FLAGS = COMMANDS.explain.flags;
/** Flags of reading manifests (-f), which the live form (objects named KIND/NAME) refuses. */
const OFFLINE_ONLY = ['filename', 'node-state', 'progress', 'node', 'mesh-config'];

const LIVE_ONLY = ['namespace', 'kubeconfig', 'context', 'meshgate-namespace', 'output'];

/** Live when the arguments name objects (KIND/NAME) or set a live-only flag, rather than -f manifests. */
function isLive(argv: readonly string[]): boolean {
  try {
    // Every flag explain knows, so an offline flag's value is not taken for an object name.
    const p = parseArgs({ args: [...argv], options: FLAGS, allowPositionals: true, strict: false });
    return p.positionals.length > 0 || LIVE_ONLY.some((k) => k in p.values);
  } catch {
    return false;
  }
}

function parseLive(argv: string[]) {
  const parsed = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
  const offline = OFFLINE_ONLY.find((k) => k in parsed.values);
  if (offline) throw new UsageError(`--${offline} reads manifests (-f); it does not go with objects named KIND/NAME`);
  return parsed;
}

async function runLive(argv: string[], io: CliIO): Promise<number> {
  let f: ReturnType<typeof parseLive>;
  try {
    f = parseLive(argv);
    const output = f.values.output ?? 'text';
    if (!['text', 'json', 'yaml'].includes(output)) throw new UsageError(`-o: "${output}" is not text, json or yaml`);
    if (f.values.config && f.values.mesh) throw new UsageError('--config and --mesh go alone: the file names its mesh');
  } catch (err) {
    io.stderr(`meshgate explain: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const v = f.values;
  if (v.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (f.positionals.length === 0) {
    io.stderr(`meshgate explain: name the objects to explain (KIND/NAME), or read manifests with -f\n\n${USAGE}`);
    return 2;
  }
  try {
    const { kc } = kubeConfig(v, io.env);
    let cfg: Compiled;
    if (v.config) cfg = compileConfig(loadConfig(v.config));
    else if (v.mesh) cfg = compileConfig(buildConfig({ mesh: v.mesh }, '--mesh'));
    else {
      const ns = v['meshgate-namespace'] ?? 'meshgate';
      const { CoreV1Api } = await import('@kubernetes/client-node');
      const cm = await kc
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ name: 'meshgate', namespace: ns })
        .catch(() => undefined);
      const text = cm?.data?.['config.yaml'];
      if (text === undefined)
        throw new UsageError(`ConfigMap ${ns}/meshgate has no config.yaml: pass --config FILE or --mesh NAME`);
      const { parse } = await import('yaml');
      cfg = compileConfig(buildConfig(parse(text), `ConfigMap ${ns}/meshgate key config.yaml`));
    }
    // A template with no node chosen streams every Node: on a terminal, a line says how many were read.
    let read = 0;
    const progress = io.stderrIsTTY
      ? new Progress({
          name: 'explain',
          write: (t) => io.stderr(t),
          tty: true,
          describe: () => `${read.toLocaleString('en-US')} Nodes read`,
        })
      : undefined;
    const results = await explainLive(kc, cfg, f.positionals, v.namespace ?? 'default', () => {
      read++;
      progress?.tick();
    }).finally(() => progress?.end());
    io.stdout(renderExplained(results, v.output ?? 'text'));
    return Math.max(0, ...results.map((r) => OUTCOME_EXIT[r.outcome]));
  } catch (err) {
    const usage = err instanceof UsageError || err instanceof ConfigError;
    io.stderr(`meshgate explain: ${(err as Error).message}\n`);
    return usage ? 2 : 1;
  }
}

export function explainCommand(argv: string[], io: CliIO): Promise<number> {
  if (isLive(argv)) return runLive(argv, io);
  let injectors: MeshInjectors | undefined;
  let refused = false;
  return runOffline(
    'explain',
    USAGE,
    argv,
    io,
    (doc, refs, where, { cfg, facts, flags }) => {
      if (!doc.value) return '';
      if (refs.length === 0)
        return `document ${doc.index + 1}: ${String(doc.value.kind)} has no pod template: unchanged\n`;
      const out: string[] = [];
      const node = flags.node as string | undefined;
      // istiod's ENABLE_NATIVE_SIDECARS=auto: the pod's node, else every node; with none known it assumes them.
      const native = node
        ? supportsNativeSidecars(facts.get(node)?.kubeletVersion)
        : (facts.nativeSidecars('all') ?? true);
      for (const ref of refs) {
        out.push(
          `document ${doc.index + 1}: ${ref.kind} ${ref.name}${ref.namespace ? ` (namespace ${ref.namespace})` : ''}:`,
        );
        const ctx = simulationContext(ref, ref.namespace ?? 'default', native);
        const j = explainTemplate({ ref, where: where(ref), facts, cfg, injectors, ctx, nodeName: node });
        if (j.decision.kind === 'deny') refused = true;
        for (const line of j.lines) out.push(`  ${line}`);
        if (j.simulation?.injected && facts.size() === 0)
          out.push(
            '  (no node versions known, --node-state: native sidecars assumed, as istiod assumes with no Nodes)',
          );
      }
      return out.map((line) => `${line}\n`).join('');
    },
    {
      // With no document at all, one empty line, as before.
      separator: '',
      ifEmpty: '\n',
      prepare: (cfg, flags) => {
        const file = flags['mesh-config'];
        if (typeof file !== 'string') return cfg;
        const cms = readMeshConfigFile(file);
        injectors = injectorsOf(cms);
        for (const p of injectors.problems) io.stderr(`meshgate explain: --mesh-config ${file}: ${p}\n`);
        return withLearnedConfigMaps(cfg, cms);
      },
      exitCode: () => (refused ? OUTCOME_EXIT.refused : 0),
    },
  );
}
