/**
 * The pflag reader (src/mesh/flags.ts) and Go's strconv.ParseBool (goBool), by table. List flags accumulate in
 * place now (they were copied per occurrence, quadratic in the number of occurrences: issue 21 §4); the tables pin
 * what a command line reads as: later values override, lists keep every value in order, `--` ends the flags.
 */
import { describe, expect, it } from 'vitest';
import { goBool, readFlags, type PflagSpec } from '../../src/mesh/flags.ts';

const SPEC: PflagSpec = {
  long: { port: 'string', skip: 'list', dry: 'bool' },
  short: { p: 'port', s: 'skip', n: 'dry' },
};

type Read = ReturnType<typeof readFlags>;
const read = (over: Partial<{ [K in keyof Read]: unknown }>) => ({
  values: new Map(),
  lists: new Map(),
  positionals: [],
  unknown: [],
  missingValue: [],
  ...over,
});

describe('readFlags', () => {
  const cases: Array<[string, string[], ReturnType<typeof read>]> = [
    ['nothing', [], read({})],
    ['a later value overrides', ['--port', '1', '--port=2', '-p3'], read({ values: new Map([['port', '3']]) })],
    [
      'list values accumulate across occurrences and spellings, in order, empty ones dropped',
      ['--skip', 'a,b', '-s', 'c', '--skip=,d,,', '-s=e', '-sf,a'],
      read({ lists: new Map([['skip', ['a', 'b', 'c', 'd', 'e', 'f', 'a']]]) }),
    ],
    ['an empty list value still names the list', ['--skip='], read({ lists: new Map([['skip', []]]) })],
    [
      'booleans take no separate value',
      ['--dry', 'x', '-n', '--dry=false'],
      read({ values: new Map([['dry', 'false']]), positionals: ['x'] }),
    ],
    [
      '-- ends the flags; everything after is positional',
      ['-p', '1', '--', '--port', '2', '-s', 'x'],
      read({ values: new Map([['port', '1']]), positionals: ['--port', '2', '-s', 'x'] }),
    ],
    [
      'unknown flags and a last flag without its value',
      ['--nope', '-z', 'v', '--port'],
      read({ unknown: ['--nope', '-z'], positionals: ['v'], missingValue: ['--port'] }),
    ],
  ];
  it.each(cases)('%s', (_, args, want) => {
    expect(readFlags(args, SPEC)).toEqual(want);
  });

  it('6,000 occurrences of a list flag read as the one comma-joined value does', () => {
    const values = Array.from({ length: 6_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}/32`);
    const many = readFlags(
      values.flatMap((v) => ['--skip', v]),
      SPEC,
    );
    const one = readFlags(['--skip', values.join(',')], SPEC);
    expect(many.lists.get('skip')).toEqual(values);
    expect(many).toEqual(one);
  });
});

describe("goBool is Go's strconv.ParseBool", () => {
  const cases: Array<[string | undefined, boolean | undefined]> = [
    ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((v) => [v, true] as [string, boolean]),
    ...['0', 'f', 'F', 'FALSE', 'false', 'False'].map((v) => [v, false] as [string, boolean]),
    // Errors in Go: not booleans to a mesh that reads them with ParseBool.
    ...['', 'tRUE', 'yes', 'y', 'on', 'no', 'off', ' true', 'true ', '2', 'enabled'].map(
      (v) => [v, undefined] as [string, undefined],
    ),
    [undefined, undefined],
  ];
  it.each(cases)('%j → %j', (value, want) => {
    expect(goBool(value)).toBe(want);
  });
});
