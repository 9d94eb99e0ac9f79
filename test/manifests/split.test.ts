/**
 * The document splitter against the `yaml` package parsing the whole stream: every corpus manifest and a table of
 * streams built to catch a wrong cut (markers inside block scalars, `...` and directives, comments between
 * documents, CRLF, a BOM, multi-byte characters split across chunks), fed in chunks of every size from one byte.
 * The pieces, each parsed alone, must make the same documents — printed text, value and errors — as the whole.
 * Also: the token cap of the parse (manifests/parse.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Document, parseAllDocuments } from 'yaml';
import { DocumentSplitter, type Piece } from '../../src/manifests/split.ts';
import { parseDocuments, TooManyTokens } from '../../src/manifests/parse.ts';

const CORPUS = new URL('../../../shared/corpus/manifests/', import.meta.url);
const corpus = readdirSync(CORPUS)
  .filter((f) => !f.endsWith('.tsv'))
  .sort()
  .map((f) => [f, readFileSync(new URL(f, CORPUS), 'utf8')] as const);

const TRICKY: Array<[string, string]> = [
  ['comment before the next ---', 'a: 1\n# about b\n\n---\nb: 2\n'],
  ['header comment before the first ---', '# header\n---\na: 1\n---\nb: 2\n'],
  ['directives after ...', '%YAML 1.2\n---\na: 1\n...\n%YAML 1.1\n---\nb: yes\n'],
  ['%TAG directive', '%TAG ! tag:example.com,2000:\n---\na: !foo 1\n'],
  ['two ... in a row', 'a: 1\n...\n...\nb: 2\n'],
  ['only ...', '...\n'],
  ['empty documents', '---\n---\n'],
  ['indented --- in a block scalar', 'key: |\n  ---\n  text\n  ...\n---\nb: 1\n'],
  ['root block scalar', '--- |\n  text\n...\n--- >\n  folded\n'],
  ['marker with a trailing space, no final newline', 'key: |\n  line\n--- \nb: 1'],
  ['marker with content on its line', '--- {a: 1}\n--- [1, 2]\n---   # comment\nc: 3\n'],
  ['not markers: ----, ---a, ..x', '----: 1\n---a: 2\n..x: 3\n'],
  ['CRLF line ends', 'a: 1\r\n---\r\nb: 2\r\n...\r\nc: 3\r\n'],
  ['a byte-order mark', '\uFEFF---\na: 1\n---\nb: 2\n'],
  ['a byte-order mark, no marker', '\uFEFFa: 1\n---\nb: 2\n'],
  ['a quoted scalar cut by a marker', 'a: "multi\n---\nline"\n'],
  ['a multi-line quoted scalar', 'a: "x\n  y"\n---\nb: 1\n'],
  ['indented comment and blank lines before ---', '  # indented\n\t\n\n---\na: 1\n'],
  ['a trailing comment document', 'a: 1\n---\n# trailing\n'],
  ['comments only', '# one\n# two\n'],
  ['empty', ''],
  ['blank lines', '\n\n'],
  ['multi-byte characters', 'name: "héllo ✓"\n---\nb: 日本語\n---\nc: 😀\n'],
  ['sequences as documents', '- a\n- b\n---\n- c\n'],
  ['an alias to an anchor of another document', 'a: &x 1\n---\nb: *x\n'],
  ['invalid YAML in the middle', 'a: 1\n---\nkind: [\n---\nc: 3\n'],
  ['a flow mapping over lines', 'a: {b: 1,\n  c: 2}\n---\nd: 4\n'],
  ['a directive in an open document', 'a: 1\n%YAML 1.2\n---\nb: 2\n'],
];

const attempt = (f: () => unknown) => {
  try {
    return f();
  } catch (err) {
    return `throws: ${(err as Error).message}`;
  }
};

/** What a document is, as far as inject and explain can tell: its errors, or its value and printed text. */
function shapes(text: string, parse: (t: string) => Document[] = (t) => parseAllDocuments(t, { prettyErrors: false })) {
  return parse(text).map((d) =>
    d.errors.length
      ? { errors: d.errors.map((e) => e.message) }
      : { value: attempt(() => d.toJS({ maxAliasCount: 100 })), text: attempt(() => d.toString({ lineWidth: 0 })) },
  );
}

function split(text: string, chunkBytes: number, max = 1 << 30): Piece[] {
  const bytes = Buffer.from(text);
  const s = new DocumentSplitter(max);
  const pieces: Piece[] = [];
  for (let i = 0; i < bytes.length; i += chunkBytes) pieces.push(...s.push(bytes.subarray(i, i + chunkBytes)));
  pieces.push(...s.end());
  return pieces;
}

const texts = (pieces: Piece[]) => pieces.map((p) => (p.kind === 'text' ? p.text : `<${p.bytes} bytes>`));

describe('DocumentSplitter: the same documents as parsing the whole stream', () => {
  it('finds the corpus', () => expect(corpus.length).toBeGreaterThan(20));

  for (const [name, text] of [...corpus, ...TRICKY]) {
    it(name, () => {
      const whole = shapes(text);
      for (const chunk of [1, 2, 3, 5, 64, 1 << 16]) {
        const pieces = split(text, chunk);
        // Nothing lost, nothing added: the pieces are the stream, cut.
        expect(texts(pieces).join(''), `chunks of ${chunk}`).toBe(text);
        // Each piece parsed alone, by the CLI's own parse (the yaml package's, counting tokens).
        expect(
          texts(pieces).flatMap((p) => shapes(p, (t) => parseDocuments(t, 1e9))),
          `chunks of ${chunk}`,
        ).toEqual(whole);
      }
    });
  }

  it('cuts where a document starts, and counts lines', () => {
    const pieces = split('# h\n---\na: 1\n---\nb: 2\n...\n%YAML 1.2\n---\nc: 3\n', 2);
    expect(pieces).toEqual([
      { kind: 'text', text: '# h\n---\na: 1\n', line: 1, bytes: 13 },
      { kind: 'text', text: '---\nb: 2\n...\n', line: 4, bytes: 13 },
      { kind: 'text', text: '%YAML 1.2\n---\nc: 3\n', line: 7, bytes: 19 },
    ]);
  });

  it('drops a piece over the limit, reports its size and first line, and goes on with the next', () => {
    const big = `a: ${'x'.repeat(100)}\n`;
    for (const chunk of [1, 7, 1 << 16]) {
      const pieces = split(`a: 1\n---\n${big}${big}---\nb: 2\n`, chunk, 150);
      expect(pieces, `chunks of ${chunk}`).toEqual([
        { kind: 'text', text: 'a: 1\n', line: 1, bytes: 5 },
        { kind: 'too_large', line: 2, bytes: 4 + 2 * big.length },
        { kind: 'text', text: '---\nb: 2\n', line: 5, bytes: 9 },
      ]);
    }
  });

  it('holds no more than the limit, however long one line is', () => {
    const s = new DocumentSplitter(1000);
    const line = Buffer.alloc(1 << 16, 'x'.charCodeAt(0));
    for (let i = 0; i < 64; i++) expect(s.push(line)).toEqual([]);
    // 4 MiB read, on one line without a newline: the splitter keeps nothing of it.
    expect((s as unknown as { parts: Uint8Array[] }).parts).toEqual([]);
    expect(s.end()).toEqual([{ kind: 'too_large', line: 1, bytes: 64 << 16 }]);
  });
});

describe('parseDocuments: the token cap', () => {
  const dense = `list:\n${'- 1\n'.repeat(1000)}`;
  it('counts what the lexer yields and stops past the cap', () => {
    expect(parseDocuments(dense, 10_000)).toHaveLength(1);
    expect(() => parseDocuments(dense, 1000)).toThrow(TooManyTokens);
    expect(() => parseDocuments(dense, 1000)).toThrow('more than 1000 YAML tokens');
  });
});
