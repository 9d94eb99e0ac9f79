/**
 * What `inject` and `explain` share: one command scaffold (flags, usage errors → exit 2, input errors → exit 1
 * naming file and document), reading manifests into documents, and deciding each pod template through the same
 * core — and the same pod parser — as the webhook.
 */
import { parseAllDocuments } from 'yaml';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from './args.ts';
import { ConfigError, configFromFlags } from '../config/load.ts';
import { compileConfig, type Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { NodeStateError, loadNodeState } from '../facts/node-state.ts';
import { decide, type Decision } from '../inject/decide.ts';
import { parsePod } from '../pod/parse.ts';
import { notAnObject, podTemplates, type PodTemplateRef } from '../manifests/workloads.ts';

export class InputError extends Error {}

export interface ParsedDoc {
  index: number;
  /** Original text, for documents passed through unchanged. */
  text: string;
  value: Record<string, unknown> | null;
}

export function readDocuments(source: string, text: string): ParsedDoc[] {
  const docs = parseAllDocuments(text, { prettyErrors: false });
  if (!Array.isArray(docs)) throw new InputError(`${source}: not YAML`);
  return docs.map((doc, index) => {
    const err = doc.errors[0];
    if (err) throw new InputError(`${source}: document ${index + 1}: invalid YAML: ${err.message.split('\n')[0]}`);
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    // Re-printed without line folding and without its own `---`: the writer joins documents with `---`.
    const text = doc.toString({ lineWidth: 0 }).replace(/^---\n/, '');
    if (value === null || value === undefined) return { index, text, value: null };
    const why = notAnObject(value);
    if (why) throw new InputError(`${source}: document ${index + 1}: not a Kubernetes object: ${why}`);
    return { index, text, value: value as Record<string, unknown> };
  });
}

/**
 * The decision for one pod template. Offline there is no requester (no kubelet mirror pods) and no namespace
 * labels: the webhook's namespace selector is assumed to have matched.
 */
export function decideTemplate(
  ref: PodTemplateRef,
  where: string,
  facts: NodeFacts,
  cfg: Compiled,
  nodeName?: string,
): Decision {
  // The template's own metadata, absent or not: ops must apply to the document exactly as it is.
  const parsed = parsePod(
    { metadata: ref.template.metadata, spec: { ...ref.template.spec } },
    `${ref.kind} ${ref.name}`,
  );
  if (!parsed.ok) throw new InputError(`${where}: not a valid pod template: ${parsed.error}`);
  if (nodeName) parsed.pod.spec.nodeName = nodeName;
  return decide({ pod: parsed.pod, namespace: ref.namespace ?? 'default' }, facts, cfg);
}

export interface OfflineFlags {
  filename: string;
  node?: string;
}

/** Flags every offline command takes, with their usage lines. */
export const OFFLINE_FLAGS = {
  filename: { type: 'string', short: 'f' },
  config: { type: 'string' },
  mesh: { type: 'string' },
  'node-state': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const OFFLINE_USAGE = `  -f FILE|-            manifests to read (- for standard input)
  --config FILE        meshgate configuration (its mesh: istio | linkerd | custom)
  --mesh NAME          or just a mesh profile with its defaults: istio | linkerd | custom
  --node-state FILE    node facts (YAML: nodes: {name: {verified: true, kubeletVersion: v1.34.1}})
`;

/**
 * Runs an offline command: parses flags (usage errors exit 2), loads config and node facts, reads the documents,
 * and hands each document with its pod templates to `each`; input, config and node-state errors exit 1 with one
 * line naming what was wrong and where. `finish` writes the output only once everything succeeded.
 */
export async function runOffline<T>(
  name: string,
  usage: string,
  argv: string[],
  io: CliIO,
  extraFlags: Record<string, { type: 'string' | 'boolean' }>,
  each: (
    doc: ParsedDoc,
    refs: PodTemplateRef[],
    where: (ref?: PodTemplateRef) => string,
    ctx: { cfg: Compiled; facts: NodeFacts; flags: Record<string, unknown> },
  ) => T,
  finish: (results: T[]) => string,
): Promise<number> {
  let flags: Record<string, unknown>;
  try {
    flags = parseFlags(argv, { ...OFFLINE_FLAGS, ...extraFlags }).values as Record<string, unknown>;
    if (flags.help) {
      io.stdout(usage);
      return 0;
    }
    if (typeof flags.filename !== 'string') throw new UsageError('missing -f FILE (or -f - for standard input)');
    if (flags.config === undefined && flags.mesh === undefined)
      throw new UsageError('missing --config FILE or --mesh NAME: which mesh meshgate guards');
  } catch (err) {
    io.stderr(`meshgate ${name}: ${(err as Error).message}\n${usage}`);
    return 2;
  }
  try {
    const cfg = compileConfig(
      configFromFlags({ config: flags.config as string | undefined, mesh: flags.mesh as string | undefined }),
    );
    const facts = loadNodeState(flags['node-state'] as string | undefined);
    const source = flags.filename === '-' ? '<stdin>' : (flags.filename as string);
    const docs = readDocuments(source, await io.readInput(flags.filename as string));
    const results: T[] = [];
    for (const doc of docs) {
      const refs = doc.value ? podTemplates(doc.value) : [];
      const where = (ref?: PodTemplateRef) =>
        `${source}: document ${doc.index + 1}${ref ? ` (${ref.kind} ${ref.name})` : ''}`;
      results.push(each(doc, refs, where, { cfg, facts, flags }));
    }
    io.stdout(finish(results));
    return 0;
  } catch (err) {
    if (
      err instanceof InputError ||
      err instanceof ConfigError ||
      err instanceof NodeStateError ||
      (err as NodeJS.ErrnoException).code
    ) {
      io.stderr(`meshgate ${name}: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}
