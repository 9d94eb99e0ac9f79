/**
 * The judges of `meshgate check --pre` (preflight.ts) on facts read before installing: the Kubernetes version and
 * the features meshgate needs, the mesh's control plane and the images it injects against
 * config.recognisedImages, the nodes' container runtimes and the libcni line each implies, and the namespaces the
 * chart would guard. Pure.
 */
import type { Level } from '../admission/level.ts';
import type { Compiled } from '../config/compile.ts';
import { parseRuntimeVersion } from '../cni/runtime-version.ts';
import { fromRepositories } from '../mesh/images.ts';
import { isReadError, type Read } from './facts.ts';
import { wholeNamespace, type OptedIn } from './judge-namespaces.ts';
import type { LiveIstioInjector, MeshSurvey } from './mesh-reader.ts';
import { result, type CheckResult, type Item } from './report.ts';

/** The chart's floor (charts/meshgate/templates/_checks.tpl: node-bound token claims and CEL transformMap, 1.32). */
const MIN_MINOR = 32;
/** Native sidecars (restartPolicy Always init containers) are on by default from kubelet 1.29. */
const NATIVE_SIDECAR_MINOR = 29;

export interface NodeInfo {
  name: string;
  kubeletVersion: string;
  containerRuntimeVersion: string;
}

/** `v1.34.2`, `v1.30.4-eks-1234` → 34, 30; undefined when it is no Kubernetes version. */
export function minorOf(version: string): number | undefined {
  const m = /^v?1\.(\d+)(?:\.|$)/.exec(version.trim());
  return m ? Number(m[1]) : undefined;
}

export function judgeKubeVersion(server: string): CheckResult {
  const minor = minorOf(server);
  if (minor === undefined) return result('kubernetes_version', 'warn', `the apiserver reports "${server}": unknown`);
  if (minor < MIN_MINOR)
    return result('kubernetes_version', 'fail', `Kubernetes ${server}: meshgate needs 1.${MIN_MINOR} or later`);
  return result('kubernetes_version', 'ok', `Kubernetes ${server} (meshgate needs 1.${MIN_MINOR} or later)`);
}

export function judgeFeatures(server: string, admission: Read<string[]>, nodes: readonly NodeInfo[]): CheckResult {
  const items: Item[] = [];
  if (admission === undefined || isReadError(admission))
    items.push({
      name: 'ValidatingAdmissionPolicy',
      status: 'warn',
      message: `admissionregistration.k8s.io/v1 could not be read: ${admission?.error ?? 'not served'}`,
    });
  else if (!admission.includes('validatingadmissionpolicies'))
    items.push({
      name: 'ValidatingAdmissionPolicy',
      status: 'fail',
      message: 'not served by admissionregistration.k8s.io/v1: the chart’s admission policies cannot be installed',
    });
  else
    items.push({
      name: 'ValidatingAdmissionPolicy',
      status: 'ok',
      message: 'served (admissionregistration.k8s.io/v1)',
    });
  const minor = minorOf(server);
  items.push(
    minor !== undefined && minor >= 30
      ? { name: 'matchConditions', status: 'ok', message: 'webhook matchConditions are GA (1.30)' }
      : {
          name: 'matchConditions',
          status: 'fail',
          message: `webhook matchConditions need 1.30; the apiserver is ${server}`,
        },
  );
  const old = nodes.filter((n) => (minorOf(n.kubeletVersion) ?? NATIVE_SIDECAR_MINOR) < NATIVE_SIDECAR_MINOR);
  items.push(
    old.length
      ? {
          name: 'native sidecars',
          status: 'warn',
          message:
            `${old.length} node(s) run a kubelet older than 1.${NATIVE_SIDECAR_MINOR} (no native sidecars): ` +
            old
              .slice(0, 5)
              .map((n) => `${n.name} ${n.kubeletVersion}`)
              .join(', '),
        }
      : {
          name: 'native sidecars',
          status: 'ok',
          message: `every kubelet runs native sidecars (1.${NATIVE_SIDECAR_MINOR}+)`,
        },
  );
  const status = items.some((i) => i.status === 'fail')
    ? 'fail'
    : items.some((i) => i.status === 'warn')
      ? 'warn'
      : 'ok';
  const message =
    status === 'ok' ? 'the cluster has every feature meshgate uses' : 'the cluster lacks a feature meshgate uses';
  return result('cluster_features', status, message, items);
}

function listed<T>(r: Read<T[]>): T[] {
  return r && !isReadError(r) ? r : [];
}

function recognised(cfg: Compiled, image: string | undefined): boolean {
  return fromRepositories(image, cfg.config.recognisedImages?.proxy ?? []);
}

/** The proxy image an injector writes, judged against config.recognisedImages. */
function injectorItem(cfg: Compiled, i: LiveIstioInjector, tags: string[], istiods: string[]): Item {
  const name = `revision ${i.revision}`;
  const where = [
    `injector ConfigMap ${i.namespace}/${i.name}`,
    istiods.length ? `istiod ${istiods.join(', ')}` : 'no istiod Deployment found',
    tags.length ? `tags ${tags.join(', ')}` : '',
  ].filter(Boolean);
  if (i.error) return { name, status: 'warn', message: `${where.join('; ')}: ${i.error}` };
  const proxy = `injects proxy ${i.proxyImage ?? '(unknown image)'}`;
  // Learned (config.learnImages): the webhook reads this very ConfigMap and trusts what it names.
  const learned = (cfg.config.learnImages?.namespaces ?? []).includes(i.namespace);
  if (!recognised(cfg, i.proxyImage) && learned)
    return { name, status: 'ok', message: `${where.join('; ')}; ${proxy} (learned from this ConfigMap: learnImages)` };
  if (!recognised(cfg, i.proxyImage))
    return {
      name,
      status: 'warn',
      message:
        `${where.join('; ')}; ${proxy}, whose repository config.recognisedImages.proxy does not list, from a ` +
        'namespace config.learnImages.namespaces does not list: meshgate would refuse its pods as impostors ' +
        '(impostor_container) until one of them does',
    };
  return { name, status: 'ok', message: `${where.join('; ')}; ${proxy}` };
}

export function judgeMesh(cfg: Compiled, s: MeshSurvey): CheckResult {
  const mesh = cfg.config.mesh;
  if (mesh === 'custom')
    return { code: 'mesh_found', status: 'skip', message: 'not checked: mesh custom (meshgate injects)' };
  const errors = (mesh === 'istio' ? [s.istiods, s.injectors, s.tags] : [s.linkerd]).filter(isReadError);
  const unreadable = errors.length ? `; could not read: ${errors.map((e) => e.error).join('; ')}` : '';
  const items: Item[] = [];
  if (mesh === 'istio') {
    const istiods = listed(s.istiods);
    const tags = listed(s.tags);
    for (const i of listed(s.injectors))
      items.push(
        injectorItem(
          cfg,
          i,
          tags.filter((t) => t.revision === i.revision).map((t) => t.tag),
          istiods
            .filter((d) => d.revision === i.revision)
            .map((d) => `${d.namespace}/${d.name}${d.image ? ` (${d.image})` : ''}`),
        ),
      );
  } else {
    for (const l of listed(s.linkerd)) {
      const name = `linkerd-config ${l.namespace}`;
      if (l.error) items.push({ name, status: 'warn', message: l.error });
      else {
        const what = `Linkerd ${l.version ?? '(unknown version)'}, proxy ${l.proxyImage ?? '(unknown image)'}, CNI ${l.cniEnabled ? 'enabled' : 'not enabled'}`;
        items.push(
          recognised(cfg, l.proxyImage)
            ? { name, status: 'ok', message: what }
            : {
                name,
                status: 'warn',
                message: `${what}: config.recognisedImages.proxy does not list its repository (impostor_container)`,
              },
        );
      }
    }
  }
  if (items.length === 0)
    return result('mesh_found', 'warn', `no ${mesh} control plane found${unreadable || ' (is it installed?)'}`);
  const status = items.some((i) => i.status !== 'ok') || unreadable ? 'warn' : 'ok';
  const what = mesh === 'istio' ? `${items.length} Istio revision${items.length === 1 ? '' : 's'}` : 'Linkerd';
  return result('mesh_found', status, `${what} found${unreadable}`, items);
}

export function judgeRuntimes(nodes: Read<NodeInfo[]>): CheckResult {
  if (nodes === undefined || isReadError(nodes))
    return result('node_runtimes', 'warn', `Nodes could not be listed: ${nodes?.error ?? 'not found'}`);
  const byRuntime = new Map<string, string[]>();
  for (const n of nodes)
    byRuntime.set(n.containerRuntimeVersion, [...(byRuntime.get(n.containerRuntimeVersion) ?? []), n.name]);
  const items: Item[] = [...byRuntime].map(([rt, names]) => {
    const v = parseRuntimeVersion(rt);
    const count = `${names.length} node${names.length === 1 ? '' : 's'} (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''})`;
    const name = rt || '(no runtime reported)';
    if (v.line) return { name, status: 'ok', message: `${count}: ${v.runtime}, libcni ${v.line}` };
    const why = v.runtime
      ? `a ${v.runtime} release the libcni table does not know`
      : 'a runtime meshgate does not emulate';
    return { name, status: 'warn', message: `${count}: ${why}; judged by every libcni line, which must agree` };
  });
  if (nodes.length === 0) return result('node_runtimes', 'warn', 'no Node is registered');
  const unknown = items.filter((i) => i.status !== 'ok').length;
  return result(
    'node_runtimes',
    unknown ? 'warn' : 'ok',
    `${nodes.length} node${nodes.length === 1 ? '' : 's'}, ${byRuntime.size} runtime release${byRuntime.size === 1 ? '' : 's'}${unknown ? `, ${unknown} unknown to the libcni table` : ''}`,
    items,
  );
}

export function judgeGuarded(opted: readonly OptedIn[], defaultLevel: Level): CheckResult {
  const whole = opted.filter((o) => o.mutating.length && wholeNamespace(o));
  const podLevel = opted.filter((o) => o.mutating.length && !wholeNamespace(o)).length;
  const items: Item[] = whole.map((o) => ({
    name: o.namespace,
    status: 'ok',
    message: `selected by ${o.mutating.map((e) => e.name).join(', ')}; level ${o.level}`,
  }));
  const also = podLevel ? `; in ${podLevel} more, the pods labelled to opt in` : '';
  const at = `unlabelled ones at ${defaultLevel} (config.enforcement.default)`;
  if (whole.length + podLevel === 0)
    return result('namespaces_guarded', 'warn', `no namespace would be guarded (${at})`);
  return result(
    'namespaces_guarded',
    'ok',
    `${whole.length} namespace${whole.length === 1 ? '' : 's'} would be guarded${also}; ${at}`,
    items,
  );
}
