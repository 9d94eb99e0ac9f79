/**
 * Istio's injector configuration as istiod reads it (pkg/kube/inject/webhook.go loadConfig, inject.go
 * UnmarshalConfig): ConfigMap istio-sidecar-injector[-<revision>] holds `config` (YAML: policy, the
 * never/alwaysInjectSelector, injectedAnnotations, defaultTemplates and the Go templates) and `values` (JSON: the
 * chart's values the templates read); ConfigMap istio[-<revision>] holds `mesh` (YAML MeshConfig, whose
 * defaultConfig is every proxy's ProxyConfig). Parsed text in, a typed view out; the YAML/JSON parsing is the
 * caller's (the CLI), so this stays pure.
 */
import { createHash } from 'node:crypto';
import type { LabelSelector } from '../../util/selector.ts';
import { type Json, asList, obj, strMap } from './types.ts';

/**
 * SHA-256 of the `sidecar` template of Istio 1.27.0's istio-discovery chart (files/injection-template.yaml, as the
 * chart places it in `config`, trimmed): the template the model in istio-inject.ts follows. A ConfigMap with another
 * sidecar template (another Istio release, a managed or customised one) is still simulated from its values, and the
 * answer says that the template differs. test/mesh/simulate-istio-real.test.ts renders the real chart and checks
 * this value.
 */
export const STOCK_SIDECAR_TEMPLATE_SHA256 = 'fc1cc98c296787a6e234bcd6b0531b7d9b55e3256226bb0af504e9b8a095a830';

export const STOCK_RELEASE = '1.27';

export interface IstioInjector {
  /** Where it was read, for the answer: "ConfigMap istio-system/istio-sidecar-injector". */
  source: string;
  /** istiod's revision ("" for the default one), from the ConfigMap's name and values.revision. */
  revision: string;
  policy: string;
  neverInjectSelector: LabelSelector[];
  alwaysInjectSelector: LabelSelector[];
  injectedAnnotations: Record<string, string>;
  defaultTemplates: string[];
  /** The template names the ConfigMap defines. */
  templates: string[];
  /** Whether its `sidecar` template is Istio 1.27.0's, which the model follows. */
  stockSidecar: boolean;
  values: Json;
  /** MeshConfig (ConfigMap istio `mesh`), {} when unknown: then istiod's defaults. */
  mesh: Json;
}

const trimmedSha = (text: string): string => createHash('sha256').update(text.trim()).digest('hex');

/** The revision a ConfigMap of that name serves: istio-sidecar-injector-canary → canary. */
export function revisionOfName(name: string): string {
  return name.startsWith('istio-sidecar-injector-') ? name.slice('istio-sidecar-injector-'.length) : '';
}

/**
 * The injector of one ConfigMap: `config` parsed from YAML, `values` from JSON, `mesh` (of the istio ConfigMap of the
 * same revision) from YAML. A sentence saying what is missing when the ConfigMap cannot be simulated.
 */
export function readIstioInjector(
  source: { name: string; namespace?: string },
  config: unknown,
  values: unknown,
  mesh: unknown,
): IstioInjector | { problem: string } {
  const where = `ConfigMap ${source.namespace ? `${source.namespace}/` : ''}${source.name}`;
  const c = obj(config);
  const v = obj(values);
  if (Object.keys(v).length === 0) return { problem: `${where} has no values (key values, JSON)` };
  const templates = obj(c.templates);
  const names = Object.keys(templates);
  if (names.length === 0) return { problem: `${where} has no templates (key config, templates:)` };
  const sidecar = templates.sidecar;
  const revision = typeof v.revision === 'string' && v.revision !== '' ? v.revision : revisionOfName(source.name);
  const selectors = (x: unknown) => asList(x).map((s) => obj(s) as LabelSelector);
  const defaults = asList(c.defaultTemplates).filter((t): t is string => typeof t === 'string');
  return {
    source: where,
    revision,
    policy: typeof c.policy === 'string' ? c.policy : 'enabled',
    neverInjectSelector: selectors(c.neverInjectSelector),
    alwaysInjectSelector: selectors(c.alwaysInjectSelector),
    injectedAnnotations: strMap(c.injectedAnnotations),
    defaultTemplates: defaults.length ? defaults : ['sidecar'],
    templates: names,
    stockSidecar: typeof sidecar === 'string' && trimmedSha(sidecar) === STOCK_SIDECAR_TEMPLATE_SHA256,
    values: v,
    mesh: obj(mesh),
  };
}

/** The sha of a template text, as STOCK_SIDECAR_TEMPLATE_SHA256 is computed (for its test). */
export const sidecarTemplateSha = trimmedSha;
