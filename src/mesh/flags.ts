/**
 * Reads a command line the way Go's pflag (cobra) does, which both istio-iptables and Linkerd's proxy-init use:
 * `--name=value`, `--name value`, `-n value`, `-nvalue`, `-n=value`, boolean `--name` / `--name=false`, `--` ends
 * the flags, and a later occurrence overrides an earlier one (list flags accumulate). Judging a mesh container by
 * what it will really do means reading its arguments as its own parser would.
 */

export interface PflagSpec {
  /** Long name without dashes → kind; `list` flags accumulate comma-separated values. */
  readonly long: Readonly<Record<string, 'string' | 'bool' | 'list'>>;
  /** Shorthand letter → long name. */
  readonly short?: Readonly<Record<string, string>>;
}

export interface ReadFlags {
  values: Map<string, string>;
  lists: Map<string, string[]>;
  positionals: string[];
  /** Flags the program does not know: it would exit with an error. */
  unknown: string[];
  /** A flag that needs a value came last. */
  missingValue: string[];
}

export function readFlags(args: readonly string[], spec: PflagSpec): ReadFlags {
  const out: ReadFlags = { values: new Map(), lists: new Map(), positionals: [], unknown: [], missingValue: [] };
  const set = (name: string, value: string) => {
    if (spec.long[name] !== 'list') {
      out.values.set(name, value);
      return;
    }
    // Appended in place: a copy of the list per occurrence made 60,000 occurrences quadratic (issue 21).
    const list = out.lists.get(name) ?? [];
    out.lists.set(name, list);
    for (const v of value.split(',')) if (v !== '') list.push(v);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      for (let j = i + 1; j < args.length; j++) out.positionals.push(args[j]);
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
    } else if (arg.startsWith('-') && arg.length > 1) {
      const letter = arg[1];
      name = spec.short?.[letter];
      if (name === undefined) {
        out.unknown.push(arg);
        continue;
      }
      const rest = arg.slice(2);
      inline = rest === '' ? undefined : rest.startsWith('=') ? rest.slice(1) : rest;
    } else {
      out.positionals.push(arg);
      continue;
    }
    const kind = spec.long[name];
    if (kind === undefined) {
      out.unknown.push(arg);
      continue;
    }
    if (kind === 'bool') {
      set(name, inline ?? 'true');
      continue;
    }
    if (inline !== undefined) {
      set(name, inline);
    } else if (i + 1 < args.length) {
      set(name, args[++i]);
    } else {
      out.missingValue.push(arg);
    }
  }
  return out;
}

/**
 * Go's strconv.ParseBool: true for 1 t T TRUE true True, false for 0 f F FALSE false False, else undefined (an
 * error in Go). The one reading of every value a mesh parses with it: pflag's boolean flags (istio-iptables,
 * proxy-init), istio-cni's DISABLE_ENVOY and sidecar.istio.io/inject, istio-iptables' variables set by BindEnv.
 */
export function goBool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}
