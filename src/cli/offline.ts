/**
 * What `inject` and `explain` share: one command scaffold (flags, usage errors → exit 2, input errors → exit 1
 * naming file and document), reading manifests into documents, and deciding each pod template through the same
 * core — and the same pod parser — as the webhook.
 */
import { changeText, promotionChecklist } from '../policy/checklist.ts';
import type { CliIO } from './io.ts';
import { parseFlags, UsageError } from '../util/args.ts';
import { InputError, readDocuments, type ParsedDoc } from './documents.ts';
import { DocumentOutput } from './output.ts';
import { Progress } from './progress.ts';
import { ConfigError, configFromFlags } from '../config/load.ts';
import { compileConfig, type Compiled } from '../config/compile.ts';
import type { NodeFacts } from '../facts/node-facts.ts';
import { NodeStateError, loadNodeState } from '../facts/node-state.ts';
import { decide, type Decision } from '../policy/mutate/decide.ts';
import type { RedirectOptions } from '../policy/redirect.ts';
import { parsePod } from '../pod/parse.ts';
import { podTemplates, type PodTemplateRef } from '../manifests/workloads.ts';
import { COMMANDS } from './commands.ts';

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
  o: RedirectOptions = {},
): Decision {
  // The template's own metadata, absent or not: ops must apply to the document exactly as it is.
  const parsed = parsePod(
    { metadata: ref.template.metadata, spec: { ...ref.template.spec } },
    `${ref.kind} ${ref.name}`,
  );
  if (!parsed.ok) throw new InputError(`${where}: not a valid pod template: ${parsed.error}`);
  if (nodeName) parsed.pod.spec.nodeName = nodeName;
  return decide({ pod: parsed.pod, namespace: ref.namespace ?? 'default' }, facts, cfg, o);
}

/** Every change that makes the template's pods admissible at enforce (src/policy/checklist.ts), one line each. */
export function templateChecklist(ref: PodTemplateRef, cfg: Compiled): string[] {
  const parsed = parsePod(
    { metadata: ref.template.metadata, spec: { ...ref.template.spec } },
    `${ref.kind} ${ref.name}`,
  );
  return parsed.ok ? promotionChecklist(parsed.pod, ref.namespace ?? 'default', cfg).map(changeText) : [];
}

/** The usage lines of the flags every offline command takes (commands.ts OFFLINE). */
export const OFFLINE_USAGE = `  -f FILE|-            manifests to read (- for standard input), one document at a time
  --config FILE        meshgate configuration (its mesh: istio | linkerd | custom)
  --mesh NAME          or just a mesh profile with its defaults: istio | linkerd | custom
  --node-state FILE    node facts (YAML: nodes: {name: {verified: true, kubeletVersion: v1.34.1}})
  --progress           show progress on stderr when a run takes over 2 s (the default when stderr is a terminal)
`;

/** How an offline command's per-document outputs are joined on stdout, and what else a command adds. */
export interface OutputShape {
  /** Between two documents' outputs. */
  separator: string;
  /** Written when no document had any output. */
  ifEmpty: string;
  /** Reads what else the command needs once the configuration is compiled (explain: the mesh's ConfigMaps). */
  prepare?: (cfg: Compiled, flags: Record<string, unknown>) => Compiled;
  /** The exit code once every document was read without error (default 0; explain: 5 when one was refused). */
  exitCode?: () => number;
}

/**
 * Runs an offline command: parses flags (usage errors exit 2), loads config and node facts, reads the documents one
 * at a time, and hands each with its pod templates to `each`, whose text is written as the document is done
 * (output.ts holds back the first 4 Mi characters, so an error in an ordinary input leaves stdout empty). Input,
 * config and node-state errors exit 1 with one line naming what was wrong and where.
 */
export async function runOffline(
  name: 'inject' | 'explain',
  usage: string,
  argv: string[],
  io: CliIO,
  each: (
    doc: ParsedDoc,
    refs: PodTemplateRef[],
    where: (ref?: PodTemplateRef) => string,
    ctx: { cfg: Compiled; facts: NodeFacts; flags: Record<string, unknown> },
  ) => string,
  shape: OutputShape,
): Promise<number> {
  let flags: Record<string, unknown>;
  try {
    flags = parseFlags(argv, COMMANDS[name].flags).values;
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
  const out = new DocumentOutput((t) => io.stdout(t), shape.separator, shape.ifEmpty);
  let progress: Progress | undefined;
  try {
    const compiled = compileConfig(
      configFromFlags({ config: flags.config as string | undefined, mesh: flags.mesh as string | undefined }),
    );
    const cfg = shape.prepare ? shape.prepare(compiled, flags) : compiled;
    const facts = loadNodeState(flags['node-state'] as string | undefined);
    const source = flags.filename === '-' ? '<stdin>' : (flags.filename as string);
    const input = await io.openInput(flags.filename as string);
    if (flags.progress === true || io.stderrIsTTY)
      progress = new Progress({ name, write: (t) => io.stderr(t), tty: io.stderrIsTTY, total: input.size });
    let done = 0;
    for await (const doc of readDocuments(source, input.chunks)) {
      const refs = doc.value ? podTemplates(doc.value) : [];
      const where = (ref?: PodTemplateRef) =>
        `${source}: document ${doc.index + 1}${ref ? ` (${ref.kind} ${ref.name})` : ''}`;
      out.add(each(doc, refs, where, { cfg, facts, flags }));
      progress?.update(++done, doc.bytesRead);
    }
    out.finish();
    progress?.end();
    return shape.exitCode?.() ?? 0;
  } catch (err) {
    if (
      err instanceof InputError ||
      err instanceof ConfigError ||
      err instanceof NodeStateError ||
      err instanceof UsageError ||
      (err as NodeJS.ErrnoException).code
    ) {
      progress?.end();
      const partial = out.partial() ? '; stdout is incomplete: it holds the output of every document before' : '';
      io.stderr(`meshgate ${name}: ${(err as Error).message}${partial}\n`);
      return 1;
    }
    throw err;
  }
}
