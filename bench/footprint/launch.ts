/**
 * How each daemon's Node starts, read from the tree it belongs to, as a cluster would start it: the container's
 * `command` in the tree's rendered chart (`mesh: istio`) when it sets one (the node agent's: V8's lite mode), else the
 * image's ENTRYPOINT flags from the tree's Dockerfile; then NODE_OPTIONS, the container's if the chart sets it, else
 * the image's ENV. A --before tree is started as that tree's chart and image would, so the two are compared as shipped.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { helmWithValues, parseManifests, KUBE_VERSION, type Obj } from '../../test/chart/helm.ts';
import { envPairs, parseDockerfile } from '../../scripts/dockerfile.ts';

export type Daemon = 'agent' | 'webhook' | 'repair';

const CONTAINERS: Record<Daemon, { kind: string; container: string }> = {
  agent: { kind: 'DaemonSet', container: 'node-agent' },
  webhook: { kind: 'Deployment', container: 'webhook' },
  repair: { kind: 'Deployment', container: 'repair-controller' },
};

/** The image's ENTRYPOINT flags (between node and the script) and its NODE_OPTIONS. */
export function imageFlags(treeDir: string): { entry: string[]; nodeOptions: string[] } {
  const runtime = parseDockerfile(readFileSync(join(treeDir, 'Dockerfile'), 'utf8')).at(-1)!;
  let nodeOptions: string[] = [];
  let entry: string[] = [];
  for (const ins of runtime.instructions) {
    // The last of each wins, as in the image; Node splits NODE_OPTIONS at spaces.
    if (ins.op === 'ENV')
      for (const [k, v] of envPairs(ins)) if (k === 'NODE_OPTIONS') nodeOptions = v.split(/\s+/).filter(Boolean);
    if (ins.op === 'ENTRYPOINT') entry = (JSON.parse(ins.args) as string[]).slice(1, -1);
  }
  return { entry, nodeOptions };
}

/** Each daemon's Node flags, in the order node reads them (command flags, then NODE_OPTIONS). */
export async function launchFlags(treeDir: string): Promise<Record<Daemon, string[]>> {
  const image = imageFlags(treeDir);
  const args = ['template', 'meshgate', join(treeDir, 'charts', 'meshgate'), '--namespace', 'meshgate'];
  const res = await helmWithValues([...args, '--kube-version', KUBE_VERSION], { mesh: 'istio' });
  if (res.code !== 0) throw new Error(`helm template of ${treeDir} failed:\n${res.stderr}`);
  const docs = parseManifests(res.stdout).docs;
  const out = {} as Record<Daemon, string[]>;
  for (const [daemon, where] of Object.entries(CONTAINERS) as Array<[Daemon, (typeof CONTAINERS)[Daemon]]>) {
    const c = docs
      .filter((d) => d.kind === where.kind)
      .flatMap((d) => d.spec.template.spec.containers as Obj[])
      .find((x) => x.name === where.container);
    if (!c) throw new Error(`the chart of ${treeDir} renders no ${where.kind} container ${where.container}`);
    const command = c.command as string[] | undefined;
    const env = (c.env as Array<{ name: string; value?: string }> | undefined)?.find((e) => e.name === 'NODE_OPTIONS');
    const nodeOptions = env?.value !== undefined ? env.value.split(/\s+/).filter(Boolean) : image.nodeOptions;
    out[daemon] = [...(command ? command.slice(1, -1) : image.entry), ...nodeOptions];
  }
  return out;
}
