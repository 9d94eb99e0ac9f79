/** What the simulation tests share: the corpus as pods, and a real injector's answer for one (test/e2e/explain-simulate*.test.ts). */
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import jsonpatch from 'fast-json-patch';
import { parseAllDocuments } from 'yaml';
import { podTemplates } from '../../src/manifests/workloads.ts';
import { podCreateReview } from '../http/reviews.ts';

type Obj = Record<string, unknown>;
const MANIFESTS = new URL('../../../shared/corpus/manifests/', import.meta.url);

function post(url: string, body: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', ca, headers: { 'Content-Type': 'application/json' }, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks).toString())
            : reject(new Error(`HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The fields of a mesh's containers that both meshes' contracts judge (src/policy/judge/istio.ts, linkerd.ts), env
 * aside: what the simulation tests compare between the real injector and meshgate's simulation.
 */
export const CONTAINER_FIELDS = [
  'image',
  'command',
  'args',
  'ports',
  'lifecycle',
  'readinessProbe',
  'startupProbe',
  'livenessProbe',
  'securityContext',
  'volumeMounts',
  'restartPolicy',
];

/**
 * The pod as Go writes it back after decoding (what the injector computes its patch against): every container with
 * `resources: {}` (a struct, never left out), and empty status and creation time.
 */
export function goShape(pod: Obj): Obj {
  const p = structuredClone(pod);
  const spec = p.spec as Obj;
  for (const k of ['containers', 'initContainers']) for (const c of (spec[k] ?? []) as Obj[]) c.resources ??= {};
  p.metadata = { creationTimestamp: null, ...(p.metadata as Obj) };
  p.status ??= {};
  return p;
}

/** A real injector's answer for a pod: the injected pod, or why it left it alone or refused it. */
export async function realInject(
  injector: { url: string },
  ca: string,
  pod: Obj,
  namespace: string,
): Promise<{ pod?: Obj; refused?: string }> {
  const object = goShape({ apiVersion: 'v1', kind: 'Pod', ...pod });
  const review = podCreateReview('u1', object, {
    namespace,
    userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
  });
  const answer = JSON.parse(await post(injector.url, JSON.stringify(review), ca)) as {
    response: { allowed: boolean; patch?: string; status?: { message?: string } };
  };
  if (!answer.response.allowed) return { refused: answer.response.status?.message ?? 'refused' };
  if (!answer.response.patch) return {};
  const ops = JSON.parse(Buffer.from(answer.response.patch, 'base64').toString());
  return { pod: defaulted(jsonpatch.applyPatch(structuredClone(object), ops).newDocument as Obj) };
}

/**
 * The one default the apiserver applies to the injector's answer before the next webhook (meshgate) sees the pod and
 * that the template relies on: a volume without a source is an emptyDir (SetDefaults_Volume). The simulation writes
 * the pods as meshgate sees them.
 */
function defaulted(pod: Obj): Obj {
  const sources = (v: Obj) => Object.keys(v).filter((k) => k !== 'name');
  for (const v of ((pod.spec as Obj).volumes ?? []) as Obj[]) if (sources(v).length === 0) v.emptyDir = {};
  return pod;
}

/** Every pod template of the corpus, as a pod named after its document (a controller's pod: generated name). */
export function corpus(): Array<{
  where: string;
  pod: Obj;
  owner: { apiVersion: string; kind: string; name: string };
}> {
  const out: ReturnType<typeof corpus> = [];
  for (const file of readdirSync(MANIFESTS).filter((f) => /\.ya?ml$/.test(f))) {
    for (const [i, doc] of parseAllDocuments(readFileSync(new URL(file, MANIFESTS), 'utf8')).entries()) {
      const value = doc.errors.length ? undefined : (doc.toJS() as Obj | null);
      if (!value?.kind) continue;
      for (const t of podTemplates(value)) {
        const metadata = structuredClone((t.template.metadata ?? {}) as Obj);
        // Created in the test's namespace: the apiserver gives a pod the namespace of its request.
        delete metadata.namespace;
        const bare = t.kind === 'Pod';
        // A controller's pod as the apiserver hands it to the webhooks: a generated name and its controller.
        if (bare) metadata.name = t.name;
        else {
          metadata.generateName = `${t.name}-`;
          const rs = t.kind === 'Deployment';
          const owner = rs ? 'ReplicaSet' : t.kind === 'CronJob' ? 'Job' : t.kind;
          if (rs) metadata.labels = { ...(metadata.labels as Obj), 'pod-template-hash': '5d8f7c9b4' };
          metadata.ownerReferences = [
            {
              apiVersion: owner === 'Job' ? 'batch/v1' : 'apps/v1',
              kind: owner,
              name: rs ? `${t.name}-5d8f7c9b4` : t.name,
              uid: '00000000-0000-0000-0000-000000000001',
              controller: true,
            },
          ];
        }
        const apiVersion = bare ? 'v1' : t.kind === 'Job' || t.kind === 'CronJob' ? 'batch/v1' : 'apps/v1';
        out.push({
          where: `${file}#${i + 1} ${t.kind} ${t.name}`,
          pod: { metadata, spec: structuredClone(t.template.spec) },
          owner: { apiVersion, kind: t.kind, name: t.name },
        });
      }
    }
  }
  return out;
}
