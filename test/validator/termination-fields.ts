/**
 * The validator's termination message fields, in the documented order (docs/validate-redirect.md): what every test of a
 * failure checks the message against, written out here rather than read from src/, so a reordering there fails them.
 */
export const TERMINATION_FIELDS = [
  'reason',
  'node',
  'probeAddress',
  'probeScope',
  'sourceAddress',
  'outboundPort',
  'inboundPort',
  'elapsedMs',
  'detail',
];
