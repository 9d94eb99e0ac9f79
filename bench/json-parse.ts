/**
 * Part 2c: the request body parser, in-process, on the bodies part 1 sends. Parsing a body is JSON.parse plus a
 * check that no key is "__proto__" or "constructor" (pod authors write most of the body):
 *   fastify's check    secure-json-parse (fastify's default parser, protoAction and constructorAction 'error'):
 *                      two regular expressions over the whole text after JSON.parse
 *   meshgate's check   what src/server/app.ts runs first: the container count of json-shape.ts (a no-op under
 *                      64 KiB) and one scan for either word or a \u escape of their letters (json-body.ts); a body
 *                      that has one goes to fastify's parser (counted below)
 * Each is timed alone and as a whole parse, best of several loops over every body, µs per body. The corpus bodies
 * are all under 64 KiB; the 1 MiB pathological pod (bench/pods.ts) shows the container count at work.
 */
import Fastify from 'fastify';
import { checkShape } from '../src/server/json-shape.ts';
import { NEEDS_CHECKED_PARSE, mayHoldPoisonKey, plainJson } from '../src/server/json-body.ts';
import { nsPerCall, round } from './stats.ts';

export interface ParseFigures {
  what: string;
  bodies: number;
  medianBytes: number;
  /** µs per body, best of the loops over every body. */
  jsonParseUs: number;
  fastifyCheckUs: number;
  meshgateCheckUs: number;
  fastifyParseUs: number;
  meshgateParseUs: number;
  /** Bodies meshgate hands to fastify's parser. */
  checkedPath: number;
}

/** The parser app.ts falls back to, taken from fastify as app.ts takes it (its callback runs synchronously). */
const fastifyParser = Fastify().getDefaultJsonParser('error', 'error');
function fastifyParse(text: string): unknown {
  let out: unknown;
  fastifyParser(undefined as never, text, (err, value) => {
    if (err) throw err;
    out = value;
  });
  return out;
}
const meshgateParse = (text: string) => {
  if (checkShape(text)) throw new Error('too many containers');
  const v = plainJson(text);
  return v === NEEDS_CHECKED_PARSE ? fastifyParse(text) : v;
};
// secure-json-parse 4.1.1's two expressions (index.js), verbatim: the check alone, without its JSON.parse.
const suspectProtoRx =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;
const suspectConstructorRx =
  /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;
const fastifyCheck = (text: string) => suspectProtoRx.test(text) || suspectConstructorRx.test(text) || 1;
const meshgateCheck = (text: string) => checkShape(text) !== null || mayHoldPoisonKey(text) || 1;

/** About 20 MB of JSON per timed loop: 20,000 corpus bodies, 20 of a 1 MiB pod. */
const BYTES_PER_LOOP = 20_000_000;

export function measureJsonParse(sets: Record<string, string[]>, loops = 7): ParseFigures[] {
  return Object.entries(sets).map(([what, bodies]) => {
    const total = bodies.reduce((a, b) => a + b.length, 0);
    const perLoop = Math.min(20_000, Math.max(20, Math.round((BYTES_PER_LOOP * bodies.length) / total)));
    const us = (fn: (t: string) => unknown) =>
      round(nsPerCall((i) => fn(bodies[i % bodies.length]), perLoop, loops) / 1000, 2);
    const fns = {
      jsonParseUs: JSON.parse,
      fastifyCheckUs: fastifyCheck,
      meshgateCheckUs: meshgateCheck,
      fastifyParseUs: fastifyParse,
      meshgateParseUs: meshgateParse,
    };
    for (const f of Object.values(fns)) us(f); // warm-up
    const sizes = bodies.map((b) => b.length).sort((a, b) => a - b);
    return {
      what,
      bodies: bodies.length,
      medianBytes: sizes[sizes.length >> 1],
      jsonParseUs: us(fns.jsonParseUs),
      fastifyCheckUs: us(fns.fastifyCheckUs),
      meshgateCheckUs: us(fns.meshgateCheckUs),
      fastifyParseUs: us(fns.fastifyParseUs),
      meshgateParseUs: us(fns.meshgateParseUs),
      checkedPath: bodies.filter((b) => plainJson(b) === NEEDS_CHECKED_PARSE).length,
    };
  });
}

export function jsonParseTable(rows: ParseFigures[]): string {
  const out = [
    `  ${'bodies'.padEnd(36)} ${'JSON.parse'.padStart(10)} | check: ${'fastify'.padStart(7)} ${'meshgate'.padStart(8)} | parse: ${'fastify'.padStart(7)} ${'meshgate'.padStart(8)} | to fastify's parser`,
  ];
  for (const r of rows) {
    out.push(
      `  ${`${r.what} (${r.bodies}, median ${r.medianBytes} B)`.padEnd(36)} ${String(r.jsonParseUs).padStart(10)} |        ${String(r.fastifyCheckUs).padStart(7)} ${String(r.meshgateCheckUs).padStart(8)} |        ${String(r.fastifyParseUs).padStart(7)} ${String(r.meshgateParseUs).padStart(8)} | ${r.checkedPath} of ${r.bodies}`,
    );
  }
  out.push('  (µs per body, best of 7 loops; check = the poisoning check alone, parse = JSON.parse and the check)');
  return out.join('\n');
}
