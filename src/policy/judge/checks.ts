/**
 * Field checks that contracts are built from (src/policy/judge/types.ts). Each says what may vary and refuses the
 * rest with words completing "its <field> …". Values come from admission bodies: any shape may arrive, so every
 * check tests the shape it reads and refuses others.
 */
import { isObject } from '../../util/json.ts';
import { sameJson } from '../../util/same.ts';
import type { ContractContext, FieldCheck, Problem } from './types.ts';

const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
};

/** A field whose value does not change what runs, from which files, or as whom; `why` documents it. */
export const anyValue =
  (_why: string): FieldCheck =>
  () =>
    undefined;

/** Present and passing `check`. */
export const required =
  (check: FieldCheck): FieldCheck =>
  (v, ctx) =>
    v === undefined ? 'is missing' : check(v, ctx);

/** Must be absent: `why` says what a value would do. */
export const absent =
  (why: string): FieldCheck =>
  (v) =>
    v === undefined ? undefined : `is ${show(v)}: ${why}`;

export const oneOf =
  (values: readonly unknown[]): FieldCheck =>
  (v) =>
    v === undefined || values.some((x) => sameJson(x, v))
      ? undefined
      : `is ${show(v)}, not one of ${values.map(show).join(', ')}`;

/**
 * A value as the apiserver stores it: an empty list is dropped (Go's `omitempty` on slices), so a template's
 * `ports: []` comes back absent.
 */
function stored(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(stored);
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const y = stored(x);
      if (y !== undefined) out[k] = y;
    }
    return out;
  }
  return v;
}

/** Equal to one of the forms as stored (deep equality); `undefined` among them allows absence. */
export const exactly = (...forms: unknown[]): FieldCheck => {
  const want = forms.map(stored);
  return (v) => {
    const got = stored(v);
    return want.some((f) => sameJson(f, got))
      ? undefined
      : `is ${v === undefined ? '(absent)' : show(v)}, not ${want.map((f) => (f === undefined ? '(absent)' : show(f))).join(' or ')}`;
  };
};

/**
 * Keys of `v` outside `allowed`, as a problem; `where` (words before "sets") is worked out only for one. Checked
 * without allocating: on the admission path for every field of every mesh container judged.
 */
export function onlyKeys(
  v: Record<string, unknown>,
  allowed: readonly string[],
  where: string | (() => string) = '',
): Problem {
  for (const k in v) {
    if (!Object.hasOwn(v, k) || v[k] === undefined || allowed.includes(k)) continue;
    const extra = Object.keys(v).filter((x) => v[x] !== undefined && !allowed.includes(x));
    return `${typeof where === 'string' ? where : where()}sets ${extra.sort().join(', ')}, which the injector never writes`;
  }
  return undefined;
}

/** The keys each shape may hold (module constants: a literal list in a check is a new array per call). */
const RESOURCE_KEYS = ['requests', 'limits'];
const RESIZE_KEYS = ['resourceName', 'restartPolicy'];
const PORT_KEYS = ['containerPort', 'protocol', 'name'];
const HTTP_GET_KEYS = ['path', 'port', 'scheme'];
const HOOK_KEYS = ['postStart', 'preStop'];
const SLEEP_KEYS = ['sleep'];
const EXEC_KEYS = ['exec'];
const COMMAND_KEYS = ['command'];
const ENV_KEYS = ['name', 'value', 'valueFrom'];
const MOUNT_KEYS = ['name', 'mountPath', 'readOnly'];

/** The apiserver's default and the only path: the kubelet bind-mounts a host file there (over anything in the image). */
export const terminationMessagePath: FieldCheck = oneOf(['/dev/termination-log']);
export const terminationMessagePolicy: FieldCheck = oneOf(['File', 'FallbackToLogsOnError']);
export const imagePullPolicy: FieldCheck = oneOf(['Always', 'IfNotPresent', 'Never']);

/** requests and limits of quantities: how much the container gets, never what it runs. */
export const resources: FieldCheck = (v) => {
  if (v === undefined) return undefined;
  if (!isObject(v)) return `is ${show(v)}, not a mapping`;
  const keys = onlyKeys(v, RESOURCE_KEYS);
  if (keys) return keys;
  for (const part of ['requests', 'limits'] as const) {
    const m = v[part];
    if (m === undefined) continue;
    if (!isObject(m)) return `.${part} is ${show(m)}, not a mapping`;
    for (const [k, q] of Object.entries(m))
      if (typeof q !== 'string' && typeof q !== 'number') return `.${part}.${k} is ${show(q)}, not a quantity`;
  }
  return undefined;
};

/** In-place resize: which resources restart the container when resized; not what it runs. */
export const resizePolicy: FieldCheck = (v) => {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) return `is ${show(v)}, not a list`;
  for (const p of v)
    if (
      !isObject(p) ||
      onlyKeys(p, RESIZE_KEYS) ||
      !['cpu', 'memory'].includes(p.resourceName as string) ||
      !['NotRequired', 'RestartContainer'].includes(p.restartPolicy as string)
    )
      return `holds ${show(p)}, not a cpu/memory resize policy`;
  return undefined;
};

/** Container ports: names the proxy's listeners; a hostPort would bind on the node, which the injector never asks. */
export const ports: FieldCheck = (v) => {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) return `is ${show(v)}, not a list`;
  for (const p of v) {
    if (!isObject(p) || !Number.isInteger(p.containerPort)) return `holds ${show(p)}, not a container port`;
    const keys = onlyKeys(p, PORT_KEYS, () => `entry ${show(p)} `);
    if (keys) return keys;
  }
  return undefined;
};

/** A probe's timing fields: when the kubelet asks, never what answers. */
const PROBE_TIMING = [
  'initialDelaySeconds',
  'periodSeconds',
  'timeoutSeconds',
  'successThreshold',
  'failureThreshold',
  'terminationGracePeriodSeconds',
];
const PROBE_KEYS = ['httpGet', ...PROBE_TIMING];

/**
 * A probe the kubelet runs from outside the container (an HTTP GET of `path` on one of `ports`): it executes
 * nothing in the container. An exec probe runs a command under the container's identity (the proxy's, which the
 * redirect exempts), so it is never allowed.
 */
export function httpGetProbe(
  paths: readonly string[],
  portsOf: (ctx: ContractContext) => readonly number[],
): FieldCheck {
  return (v, ctx) => {
    if (v === undefined) return undefined;
    if (!isObject(v)) return `is ${show(v)}, not a probe`;
    if (v.exec !== undefined) return `runs a command (exec ${show(v.exec)}) under the container's identity`;
    const keys = onlyKeys(v, PROBE_KEYS);
    if (keys) return keys;
    const get = v.httpGet;
    if (!isObject(get)) return `is ${show(v)}, not an HTTP GET probe`;
    const getKeys = onlyKeys(get, HTTP_GET_KEYS, 'httpGet ');
    if (getKeys) return getKeys;
    if (get.scheme !== undefined && get.scheme !== 'HTTP') return `httpGet.scheme is ${show(get.scheme)}`;
    if (!paths.includes((get.path as string) ?? '/'))
      return `httpGet.path is ${show(get.path)}, not ${paths.join(' or ')}`;
    const allowedPorts = portsOf(ctx);
    if (!allowedPorts.includes(get.port as number))
      return `httpGet.port is ${show(get.port)}, not ${allowedPorts.join(' or ')}`;
    return undefined;
  };
}

/** A command line as the injector writes it: each word equal to a string, or matching a pattern (a number, a port). */
export type CommandForm = readonly (string | RegExp)[];

function matchesCommand(form: CommandForm, command: unknown): boolean {
  return (
    Array.isArray(command) &&
    command.length === form.length &&
    form.every((w, i) =>
      typeof w === 'string' ? command[i] === w : typeof command[i] === 'string' && w.test(command[i]),
    )
  );
}

/**
 * Lifecycle hooks: an exec hook runs a command under the container's identity, so only the exact commands the
 * injector writes pass (e.g. Istio's `pilot-agent wait`); a `sleep` hook runs nothing.
 */
export function execHooks(commands: readonly CommandForm[]): FieldCheck {
  return (v) => {
    if (v === undefined) return undefined;
    if (!isObject(v)) return `is ${show(v)}, not a lifecycle`;
    const keys = onlyKeys(v, HOOK_KEYS);
    if (keys) return keys;
    for (const hook of ['postStart', 'preStop'] as const) {
      const h = v[hook];
      if (h === undefined) continue;
      if (!isObject(h)) return `.${hook} is ${show(h)}`;
      if (h.sleep !== undefined && onlyKeys(h, SLEEP_KEYS) === undefined) continue;
      const exec = h.exec;
      if (!isObject(exec) || onlyKeys(h, EXEC_KEYS) || onlyKeys(exec, COMMAND_KEYS))
        return `.${hook} is ${show(h)}: only the injector's own exec commands may run as this container`;
      if (!commands.some((c) => matchesCommand(c, exec.command)))
        return `.${hook} runs ${show(exec.command)}, not one of the injector's commands (${commands.map((c) => c.map(String).join(' ')).join('; ')})`;
    }
    return undefined;
  };
}

/** A container's env entry, as the apiserver stores it. */
interface Env {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

/** What one variable may hold: a literal checked by `value`, or a valueFrom equal to one of `from`. */
export interface EnvRule {
  /** Checks a literal value; absent = no literal allowed. */
  readonly value?: (v: string, ctx: ContractContext) => Problem;
  /** The valueFrom forms allowed (deep equality; fieldRef.apiVersion v1 as the apiserver defaults it). */
  readonly from?: readonly Record<string, unknown>[];
}

/** A variable the program reads in a way no value makes safe, with why. */
export type EnvRefusal = { readonly refuse: string };

export interface EnvContract {
  /** Variables by exact name. */
  readonly names: Readonly<Record<string, EnvRule | EnvRefusal>>;
  /** Variables by name pattern, first match wins, after `names`. */
  readonly patterns?: readonly (readonly [RegExp, EnvRule | EnvRefusal])[];
  /**
   * Any other name: what the program does with it. `refuse` for a program whose every variable matters; a rule for
   * one that reads only known names (the rest are inert), listed in the contract.
   */
  readonly other: EnvRule | EnvRefusal;
}

export const anyLiteral: EnvRule = { value: () => undefined };
export const fieldRef = (fieldPath: string): Record<string, unknown> => ({ fieldRef: { apiVersion: 'v1', fieldPath } });
export const resourceFieldRef = (resource: string): Record<string, unknown> => ({ resourceFieldRef: { resource } });

/** A rule's `from` forms as stored, computed once per rule (rules are the contracts' constants). */
const storedRules = new WeakMap<EnvRule, readonly Record<string, unknown>[]>();
function storedForms(rule: EnvRule): readonly Record<string, unknown>[] | undefined {
  if (!rule.from) return undefined;
  let forms = storedRules.get(rule);
  if (!forms) {
    forms = rule.from.map(storedFrom);
    storedRules.set(rule, forms);
  }
  return forms;
}

/** `fieldRef.apiVersion` is defaulted to v1 by the apiserver; a resourceFieldRef's divisor "0" is the same as none. */
function storedFrom(from: Record<string, unknown>): Record<string, unknown> {
  const f = from.fieldRef;
  if (isObject(f) && f.apiVersion === undefined) return { ...from, fieldRef: { apiVersion: 'v1', ...f } };
  const r = from.resourceFieldRef;
  if (isObject(r) && (r.divisor === '0' || r.divisor === 0 || r.divisor === '1')) {
    const { divisor: _d, ...rest } = r;
    return { ...from, resourceFieldRef: rest };
  }
  return from;
}

/**
 * Variables that change which program runs or what it loads, in any container: the runtime and the container's own
 * exec hooks resolve commands through PATH (Istio's `pilot-agent wait` hook, istio-iptables' `iptables`), and the
 * dynamic loader and glibc load the libraries these name. No injector writes them.
 */
const LOADER: ReadonlyArray<readonly [RegExp, string]> = [
  [/^PATH$/, 'commands the container and its hooks run would be looked up where the pod says'],
  [/^LD_/, 'the dynamic loader would load libraries the pod names'],
  [/^GCONV_PATH$/, 'glibc would load character-set modules the pod names'],
];
/** Whether any of LOADER's names matches: one test for the variables that are none of them (all but a crafted few). */
const LOADER_ANY = /^(?:PATH$|LD_|GCONV_PATH$)/;

export function env(contract: EnvContract): FieldCheck {
  return (v, ctx) => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) return `is ${show(v)}, not a list`;
    for (const raw of v) {
      if (!isObject(raw) || typeof raw.name !== 'string') return `holds ${show(raw)}, not a variable`;
      const e = raw as unknown as Env;
      const keys = onlyKeys(raw, ENV_KEYS, () => `variable ${e.name} `);
      if (keys) return keys;
      const loader = LOADER_ANY.test(e.name) ? LOADER.find(([re]) => re.test(e.name)) : undefined;
      if (loader) return `sets ${e.name}: ${loader[1]}`;
      const rule = contract.names[e.name] ?? contract.patterns?.find(([re]) => re.test(e.name))?.[1] ?? contract.other;
      if ('refuse' in rule) return `sets ${e.name}: ${rule.refuse}`;
      if (e.valueFrom !== undefined) {
        const from = isObject(e.valueFrom) ? storedFrom(e.valueFrom) : e.valueFrom;
        if (!storedForms(rule)?.some((f) => sameJson(f, from)))
          return `takes ${e.name} from ${show(e.valueFrom)}, which admission cannot read${
            rule.from ? ` (the injector writes ${rule.from.map(show).join(' or ')})` : ''
          }`;
        continue;
      }
      if (!rule.value) return `sets ${e.name} to a literal, where the injector writes ${show(rule.from)}`;
      const problem = rule.value(e.value ?? '', ctx);
      if (problem) return `sets ${e.name}=${show(e.value ?? '')}: ${problem}`;
    }
    return undefined;
  };
}

/** Where a mount may go and what the volume behind it must be. */
export interface MountRule {
  /** Volume name, or a test of it (the apiserver's kube-api-access-<random>). */
  readonly name: string | RegExp;
  readonly mountPath: string;
  /** undefined: either; true: must be read-only. */
  readonly readOnly?: true;
  /** The pod's volume of that name, judged by what it is: a ConfigMap under the name of an emptyDir is not one. */
  readonly volume: (vol: Readonly<Record<string, unknown>> | undefined, ctx: ContractContext) => Problem;
}

export interface MountContract {
  readonly rules: readonly MountRule[];
  /**
   * Mounts beyond the rules (Istio's sidecar.istio.io/userVolumeMount): judged by this, or refused when absent.
   */
  readonly extra?: (mount: Record<string, unknown>, ctx: ContractContext) => Problem;
}

/** A mounts check, with its rules kept readable: which volumes are the producer's (src/policy/mesh-volumes.ts). */
export type MountsCheck = FieldCheck & { readonly rules: readonly MountRule[] };

/** Whether `rule` is the one for a mount of volume `name` at `mountPath`. */
export function ruleMatches(rule: MountRule, name: string, mountPath: string): boolean {
  return (typeof rule.name === 'string' ? rule.name === name : rule.name.test(name)) && rule.mountPath === mountPath;
}

export function mounts(contract: MountContract): MountsCheck {
  const check: FieldCheck = (v, ctx) => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) return `is ${show(v)}, not a list`;
    for (const m of v) {
      if (!isObject(m) || typeof m.name !== 'string' || typeof m.mountPath !== 'string')
        return `holds ${show(m)}, not a mount`;
      const rule = contract.rules.find((r) => ruleMatches(r, m.name as string, m.mountPath as string));
      if (!rule) {
        if (!contract.extra)
          return `mounts volume ${m.name} at ${m.mountPath}, where the injector mounts nothing of that name`;
        const problem = contract.extra(m, ctx);
        if (problem) return problem;
        continue;
      }
      const keys = onlyKeys(m, MOUNT_KEYS, () => `mount ${m.name} `);
      if (keys) return `${keys} (sub-paths and propagation change what lands there)`;
      if (rule.readOnly && m.readOnly !== true) return `mounts ${m.name} at ${m.mountPath} writable, not read-only`;
      const problem = rule.volume(ctx.pod.volumes.get(m.name as string), ctx);
      if (problem) return `mounts ${m.name} at ${m.mountPath}, but the pod's volume ${m.name} ${problem}`;
    }
    return undefined;
  };
  return Object.assign(check, { rules: contract.rules });
}

/**
 * A volume source as the apiserver stores it: configMap, secret, downwardAPI and projected sources get
 * `defaultMode: 420` (0644) when they have none (pkg/apis/core/v1/defaults.go), and a projected token
 * `expirationSeconds: 3600`.
 */
function storedVolume(v: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (isObject(x) && ['configMap', 'secret', 'downwardAPI', 'projected'].includes(k)) {
      const { defaultMode, ...rest } = x;
      const src: Record<string, unknown> = defaultMode === 420 || defaultMode === undefined ? rest : x;
      if (k === 'projected' && Array.isArray(src.sources))
        src.sources = src.sources.map((p) => {
          if (!isObject(p) || !isObject(p.serviceAccountToken)) return p;
          const { expirationSeconds, ...t } = p.serviceAccountToken;
          return {
            ...p,
            serviceAccountToken:
              expirationSeconds === 3600 || expirationSeconds === undefined ? t : p.serviceAccountToken,
          };
        });
      out[k] = src;
    } else out[k] = x;
  }
  return out;
}

/**
 * Volume checks for mount rules. A mount of a volume the pod does not have passes here: the apiserver refuses such a
 * pod itself (validation runs before the validating webhooks, which then see the final volume).
 */
export const volume = {
  /**
   * An emptyDir (of `medium`, if given): starts empty, so nothing the pod author wrote is in it. A volume with no
   * source at all is one too: the apiserver defaults it to an emptyDir (Istio's template writes `- emptyDir:`).
   */
  emptyDir:
    (medium?: string): MountRule['volume'] =>
    (vol) => {
      if (!vol) return undefined;
      const e = vol.emptyDir ?? null;
      if (Object.keys(vol).some((k) => k !== 'name' && k !== 'emptyDir' && vol[k] !== undefined))
        return `is ${show(vol)}, not an emptyDir`;
      if (e !== null && !isObject(e)) return `is ${show(vol)}, not an emptyDir`;
      const got = (e as Record<string, unknown> | null)?.medium ?? '';
      if (medium !== undefined && got !== medium) return `is an emptyDir of medium ${show(got)}, not ${medium}`;
      return undefined;
    },
  /** Exactly one of the forms (besides its name), as the apiserver stores volumes (storedVolume). */
  equals: (...forms: readonly Record<string, unknown>[]): MountRule['volume'] => {
    const want = forms.map(storedVolume);
    return (vol) => {
      if (!vol) return undefined;
      const { name: _n, ...rest } = vol;
      const got = storedVolume(rest);
      return want.some((f) => sameJson(f, got)) ? undefined : `is ${show(rest)}, not what the injector adds`;
    };
  },
  /** Checked by a function of the volume's source. */
  where:
    (test: (vol: Readonly<Record<string, unknown>>, ctx: ContractContext) => Problem): MountRule['volume'] =>
    (vol, ctx) =>
      vol ? test(vol, ctx) : undefined,
};

/** A security context equal to one of the forms, except the listed fields, which `vary` may accept. */
export function securityContext(
  forms: readonly ((ctx: ContractContext) => Record<string, unknown>)[],
  vary: Readonly<Record<string, FieldCheck>> = {},
): FieldCheck {
  const varied = Object.entries(vary);
  return (v, ctx) => {
    if (v === undefined) v = {};
    if (!isObject(v)) return `is ${show(v)}, not a security context`;
    for (const [k, check] of varied) {
      const p = check(v[k], ctx);
      if (p) return `.${k} ${p}`;
    }
    // The fields no `vary` check accepts, set (not undefined), as what they grant.
    const got = normaliseCaps(v, vary);
    // Form by form, stopping at the first that matches: the message below needs them all only on a refusal.
    const candidates: Record<string, unknown>[] = [];
    for (const f of forms) {
      const form = normaliseCaps(f(ctx));
      if (sameJson(form, got)) return undefined;
      candidates.push(form);
    }
    // Name the first field that differs from the nearest form: the one differing in the fewest fields.
    const diffs = candidates.map((f) =>
      [...new Set([...Object.keys(f), ...Object.keys(got)])].filter((k) => !sameJson(f[k], got[k])).sort(),
    );
    const nearest = diffs.reduce((a, b) => (b.length < a.length ? b : a));
    const form = candidates[diffs.indexOf(nearest)];
    const k = nearest[0];
    return `.${k} is ${got[k] === undefined ? '(absent)' : show(got[k])}, where the injector writes ${form[k] === undefined ? 'nothing' : show(form[k])}`;
  };
}

/** `cap_net_admin`, `NET_ADMIN` → `NET_ADMIN`. */
function runtimeName(c: unknown): string {
  const u = String(c).toUpperCase();
  return u.startsWith('CAP_') ? u.slice(4) : u;
}

/**
 * A security context as what it grants: capability lists as sets of runtime names (order and the CAP_ prefix change
 * nothing), and `privileged`, `readOnlyRootFilesystem` and `runAsNonRoot` false the same as absent (their defaults).
 * `allowPrivilegeEscalation` is not: absent means true.
 */
function normaliseCaps(
  sc: Record<string, unknown>,
  leaveOut: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  // Built key by key (no delete, which would turn the object into a slow dictionary for the comparisons after).
  const out: Record<string, unknown> = {};
  for (const k in sc) {
    if (!Object.hasOwn(sc, k) || k in leaveOut) continue;
    const x = sc[k];
    if (x === undefined || (x === false && FALSE_BY_DEFAULT.includes(k))) continue;
    out[k] = k === 'capabilities' && isObject(x) ? { ...x, add: capNames(x.add), drop: capNames(x.drop) } : x;
  }
  return out;
}

/** Fields whose `false` is their default: the same as absent. */
const FALSE_BY_DEFAULT = ['privileged', 'readOnlyRootFilesystem', 'runAsNonRoot'];

/** A capability list as a set of runtime names (sorted); anything else as it is. */
const capNames = (l: unknown) => (Array.isArray(l) ? [...new Set(l.map(runtimeName))].sort() : l);
