/**
 * Parses one piece of a YAML stream (split.ts) as `parseAllDocuments(text, { prettyErrors: false })` does — the
 * same Lexer, Parser and Composer of the `yaml` package — but counts the lexer's tokens on the way and stops at
 * `maxTokens`. Bytes alone do not bound what a document costs: the syntax tree takes ~250 bytes of heap per token,
 * and a dense document (`- 1` lines) has 1.25 tokens per byte where a typical manifest has 0.3, so 4 MiB of it
 * took 1.1 GB. The count stops such a document before its tree grows, in the same single pass.
 */
import { Composer, type Document, Lexer, Parser } from 'yaml';

export class TooManyTokens extends Error {}

/** The documents of `text`; throws TooManyTokens once the text holds more than `maxTokens` tokens. */
export function parseDocuments(text: string, maxTokens: number): Document.Parsed[] {
  const parser = new Parser();
  function* tokens() {
    let count = 0;
    for (const lexeme of new Lexer().lex(text)) {
      if (++count > maxTokens) throw new TooManyTokens(`more than ${maxTokens} YAML tokens`);
      yield* parser.next(lexeme);
    }
    yield* parser.end();
  }
  return Array.from(new Composer({ prettyErrors: false }).compose(tokens()));
}
