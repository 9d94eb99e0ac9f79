/**
 * Splits a YAML stream into its documents' texts as the bytes arrive, so `inject` and `explain` hold one document
 * at a time instead of a whole file's syntax tree (issue 24: 35 MB of manifests took 1.3 GB).
 *
 * The cut is at YAML's document markers, which the spec lets no scalar contain: a line starting with `---` or `...`
 * followed by a space, a tab or the line's end is a marker wherever it stands ("c-forbidden", YAML 1.2 §9.1.4).
 * A `---` line opens a new piece unless the piece so far holds only comments, blank lines or directives (then it is
 * that piece's own start, as in `# header\n---\nkind: …`); a `...` line closes the piece after itself, so the
 * directives that follow it go with the next document. Each piece is then parsed on its own by the `yaml` package,
 * which makes the same documents, comments included, as parsing the whole stream does
 * (test/manifests/split.test.ts compares both over the corpus).
 *
 * A piece longer than the per-document limit is not kept: its bytes are only counted to its end, then reported.
 */

/** One piece of the stream: usually one document with the comments around it, or only comments. */
export type Piece =
  | { kind: 'text'; text: string; line: number; bytes: number }
  | { kind: 'too_large'; line: number; bytes: number };

const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const HASH = 0x23;
const PERCENT = 0x25;
const DASH = 0x2d;
const DOT = 0x2e;
const BOM = [0xef, 0xbb, 0xbf];

type Marker = 'start' | 'end' | undefined;

/** Which marker the line beginning at `i` is; `eof` says no byte follows the buffer. */
function markerAt(buf: Uint8Array, i: number, eof: boolean): Marker {
  const c = buf[i];
  if ((c !== DASH && c !== DOT) || buf[i + 1] !== c || buf[i + 2] !== c) return undefined;
  const after = buf[i + 3];
  const blank = after === undefined ? eof : after === SPACE || after === TAB || after === NL || after === CR;
  if (!blank) return undefined;
  return c === DASH ? 'start' : 'end';
}

export class DocumentSplitter {
  /** The current piece's bytes from earlier chunks (dropped once it is over the limit). */
  private parts: Uint8Array[] = [];
  private size = 0;
  private tooLarge = false;
  /** The piece holds a `---` or a content line, so the next `---` starts another piece. */
  private open = false;
  private pieceLine = 1;
  private line = 1;
  private atLineStart = true;
  /** The current line's leading spaces and tabs are read, its first other byte not yet: comment or content. */
  private inIndent = false;
  private closeAfterLine = false;
  /** Up to three bytes of a line start the last chunk ended in: a marker cannot be told from them yet. */
  private carry: Uint8Array | undefined;
  private started = false;

  /** The most one piece may hold (`MAX_DOCUMENT_BYTES` for the CLI). */
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Feeds the next bytes; returns the pieces they complete. */
  push(chunk: Uint8Array): Piece[] {
    return this.scan(chunk, false);
  }

  /** The end of the stream: the last piece, if it holds anything. */
  end(): Piece[] {
    const out = this.scan(new Uint8Array(0), true);
    if (this.size > 0 || this.parts.length > 0) out.push(this.cut(undefined, 0, 0));
    return out;
  }

  private scan(input: Uint8Array, eof: boolean): Piece[] {
    const buf = this.carry ? Buffer.concat([this.carry, input]) : input;
    this.carry = undefined;
    const out: Piece[] = [];
    let from = 0;
    let i = 0;
    if (!this.started && (buf.length >= 3 || eof)) {
      this.started = true;
      if (BOM.every((b, k) => buf[k] === b)) i = 3;
    } else if (!this.started) {
      this.carry = buf;
      return out;
    }
    while (i < buf.length) {
      if (this.atLineStart) {
        if (buf.length - i < 4 && !eof && buf.indexOf(NL, i) === -1) {
          this.carry = buf.subarray(i);
          this.keep(buf, from, i);
          return out;
        }
        this.atLineStart = false;
        const marker = markerAt(buf, i, eof);
        if (marker === 'start') {
          if (this.open) {
            out.push(this.cut(buf, from, i));
            from = i;
          }
          this.open = true;
        } else if (marker === 'end') {
          this.open = true;
          this.closeAfterLine = true;
        } else if (!this.open && buf[i] !== PERCENT) {
          // Comment, blank or content? Only a piece not yet open needs to know (a `%` line there is a directive).
          this.inIndent = true;
        }
      }
      if (this.inIndent) {
        while (i < buf.length && (buf[i] === SPACE || buf[i] === TAB)) i++;
        if (i === buf.length) break;
        this.inIndent = false;
        const c = buf[i];
        if (c !== HASH && c !== NL && c !== CR) this.open = true;
      }
      const nl = buf.indexOf(NL, i);
      if (nl === -1) break;
      i = nl + 1;
      this.line++;
      this.atLineStart = true;
      if (this.closeAfterLine) {
        this.closeAfterLine = false;
        out.push(this.cut(buf, from, i));
        from = i;
        this.open = false;
      }
    }
    this.keep(buf, from, buf.length);
    return out;
  }

  /** Adds buf[from, to) to the current piece, or only counts it once the piece is over the limit. */
  private keep(buf: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    this.size += to - from;
    if (this.tooLarge) return;
    if (this.size > this.maxBytes) {
      this.tooLarge = true;
      this.parts = [];
      return;
    }
    // A copy: the caller may reuse its chunk (a stream's buffer), and a slice would pin all of it.
    this.parts.push(Uint8Array.prototype.slice.call(buf, from, to));
  }

  /** Ends the current piece with buf[from, to) and starts the next at the line `to` begins. */
  private cut(buf: Uint8Array | undefined, from: number, to: number): Piece {
    if (buf) this.keep(buf, from, to);
    const line = this.pieceLine;
    const bytes = this.size;
    const piece: Piece = this.tooLarge
      ? { kind: 'too_large', line, bytes }
      : { kind: 'text', text: Buffer.concat(this.parts).toString('utf8'), line, bytes };
    this.parts = [];
    this.size = 0;
    this.tooLarge = false;
    // `to` is a line start: the line being read (a `---`), or the one after a `...`.
    this.pieceLine = this.line;
    return piece;
  }
}
