// A small Dockerfile interpreter for the instructions meshgate's Dockerfile uses, so a test can replay the build
// without a Docker engine: each stage gets a directory standing for its root filesystem, COPY copies from the
// build context (honouring .dockerignore the way Docker does) or from an earlier stage, RUN runs the shell command
// in the stage's WORKDIR on this machine. An instruction it does not model is an error, never silently skipped.
// The release step reads the runtime stage with it too (scripts/release-image.ts).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, posix } from 'node:path';

export interface Instruction {
  op: string;
  args: string;
  line: number;
}

export interface Stage {
  name: string;
  image: string;
  instructions: Instruction[];
}

/**
 * The `KEY=value` pairs of an ENV instruction, in order. A value is a word or a double-quoted string without
 * escapes (`NODE_OPTIONS="--a --b"`): what this Dockerfile writes. Anything else is an error, not a guess.
 */
export function envPairs(ins: Instruction): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const rest = ins.args.replace(
    /(\w+)=(?:"([^"\\]*)"|([^\s"\\]+))\s*/g,
    (_, k: string, quoted?: string, word?: string) => {
      pairs.push([k, quoted ?? word ?? '']);
      return '';
    },
  );
  if (rest.trim() !== '') throw new Error(`line ${ins.line}: ENV ${ins.args}: cannot read "${rest.trim()}"`);
  return pairs;
}

/** Parses into stages; line continuations joined, comments and blank lines dropped. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = lines[i];
    while (line.trimEnd().endsWith('\\') && i + 1 < lines.length)
      line = `${line.trimEnd().slice(0, -1)} ${lines[++i].trim()}`;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const m = /^(\S+)\s*(.*)$/.exec(trimmed)!;
    const ins: Instruction = { op: m[1].toUpperCase(), args: m[2], line: start };
    if (ins.op === 'FROM') {
      const [image, as, name] = ins.args.split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : String(stages.length), instructions: [] });
    } else if (stages.length === 0) {
      if (ins.op !== 'ARG') throw new Error(`line ${start}: ${ins.op} before FROM`);
    } else {
      stages.at(-1)!.instructions.push(ins);
    }
  }
  return stages;
}

/** Flags like --from=build at the start of an instruction's arguments, and the rest. */
export function splitFlags(args: string): { flags: Record<string, string>; rest: string[] } {
  const words = args.split(/\s+/).filter(Boolean);
  const flags: Record<string, string> = {};
  while (words[0]?.startsWith('--')) {
    const [k, v = ''] = words.shift()!.slice(2).split('=');
    flags[k] = v;
  }
  return { flags, rest: words };
}

function globToRegex(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * Docker's .dockerignore rule: patterns in order, the last one matching the path or any of its parent dirs wins,
 * `!` re-includes. Paths are relative to the context root, with forward slashes.
 */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = posix.normalize((negate ? l.slice(1) : l).trim()).replace(/^\/+|\/+$/g, '');
      return { negate, re: globToRegex(pattern) };
    });
  return (path: string) => {
    const parts = path.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const r of rules) if (prefixes.some((p) => r.re.test(p))) ignored = !r.negate;
    return ignored;
  };
}

export interface ReplayOptions {
  context: string;
  /** Where the stage roots are created (one subdirectory per stage). */
  workDir: string;
  /** Environment for RUN (PATH must reach node and npm). */
  env: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface ReplayedStage {
  stage: Stage;
  root: string;
  workdir: string;
  user?: string;
  entrypoint?: string[];
  env: Record<string, string>;
}

/** Replays every stage in order and returns them; the last one is the image. */
export function replay(stages: Stage[], o: ReplayOptions): ReplayedStage[] {
  const ignored = dockerignore(
    existsSync(join(o.context, '.dockerignore')) ? readFileSync(join(o.context, '.dockerignore'), 'utf8') : '',
  );
  const done = new Map<string, ReplayedStage>();
  for (const [index, stage] of stages.entries()) {
    const s: ReplayedStage = { stage, root: join(o.workDir, `stage-${index}-${stage.name}`), workdir: '/', env: {} };
    mkdirSync(s.root, { recursive: true });
    const at = (p: string) => join(s.root, posix.resolve(s.workdir, p));
    for (const ins of stage.instructions) {
      o.log?.(`[${stage.name}] ${ins.op} ${ins.args}`);
      switch (ins.op) {
        case 'WORKDIR':
          s.workdir = posix.resolve(s.workdir, ins.args);
          mkdirSync(at('.'), { recursive: true });
          break;
        case 'ENV':
          for (const [k, v] of envPairs(ins)) s.env[k] = v;
          break;
        case 'USER':
          s.user = ins.args;
          break;
        case 'ENTRYPOINT':
          s.entrypoint = JSON.parse(ins.args);
          break;
        case 'RUN':
          execFileSync('sh', ['-c', ins.args], {
            cwd: at('.'),
            env: { ...o.env, ...s.env },
            stdio: ['ignore', 'pipe', 'pipe'],
            maxBuffer: 64 << 20,
          });
          break;
        case 'COPY': {
          const { flags, rest } = splitFlags(ins.args);
          const dest = rest.pop()!;
          const from = flags.from === undefined ? undefined : done.get(flags.from);
          if (flags.from !== undefined && !from)
            throw new Error(`line ${ins.line}: COPY --from=${flags.from}: no such earlier stage`);
          for (const src of rest) {
            const source = from ? join(from.root, src) : join(o.context, src);
            if (!existsSync(source))
              throw new Error(`line ${ins.line}: COPY ${src}: not found${from ? '' : ' in the build context'}`);
            const target =
              statSync(source).isDirectory() || !(dest.endsWith('/') || dest === '.')
                ? at(dest)
                : join(at(dest), basename(src));
            copy(
              source,
              target,
              from
                ? undefined
                : (abs) => ignored(posix.relative(o.context.split('\\').join('/'), abs.split('\\').join('/'))),
            );
          }
          break;
        }
        case 'ARG':
        case 'LABEL':
        case 'EXPOSE':
          break;
        default:
          throw new Error(
            `line ${ins.line}: ${ins.op} is not modelled by scripts/dockerfile.ts; teach it before using it`,
          );
      }
    }
    done.set(stage.name, s);
    done.set(String(index), s);
  }
  return [...new Set(done.values())];
}

function copy(source: string, target: string, isIgnored?: (abs: string) => boolean): void {
  if (isIgnored?.(source)) throw new Error(`COPY ${source}: excluded by .dockerignore`);
  cpSync(source, target, { recursive: true, filter: (p) => !isIgnored?.(p) });
}

/** Every file under dir, relative, sorted (for assertions on what an image holds). */
export function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) => {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    return e.isDirectory() ? listFiles(dir, rel) : [rel];
  });
}
