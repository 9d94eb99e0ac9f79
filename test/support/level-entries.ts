/**
 * The chart's namespace entries per enforcement level, as the check and repair tests read them: each entry selects
 * opted-in namespaces (meshgate.io/inject=enabled) at its level (meshgate.io/enforcement), audit being the level of
 * namespaces that name neither enforce nor warn.
 */
import type { WebhookEntry } from '../../src/check/facts.ts';

export function levelSelector(level: string) {
  return {
    matchExpressions: [
      { key: 'meshgate.io/inject', operator: 'In', values: ['enabled'] },
      level === 'audit'
        ? { key: 'meshgate.io/enforcement', operator: 'NotIn', values: ['enforce', 'warn'] }
        : { key: 'meshgate.io/enforcement', operator: 'In', values: [level] },
    ],
  };
}

/** The entry `name` for `level`, calling meshgate's Service at `path`, as `meshgate check` reads it. */
export const levelEntry = (name: string, level: string, path: string): WebhookEntry => ({
  name,
  service: { namespace: 'meshgate', name: 'meshgate', port: 443, path },
  namespaceSelector: levelSelector(level),
});
