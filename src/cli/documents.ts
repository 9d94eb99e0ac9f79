/**
 * Reads manifests for `inject` and `explain` one document at a time: the bytes are cut into documents at YAML's
 * document markers (manifests/split.ts) and each is parsed alone, so memory holds one document, not the file
 * (issue 24). Errors name the file and the document's index (1-based, counting every document of the stream).
 */
import { DocumentSplitter, type Piece } from '../manifests/split.ts';
import { TooManyTokens, parseDocuments } from '../manifests/parse.ts';
import { notAnObject } from '../manifests/workloads.ts';

export class InputError extends Error {}

/**
 * The most one document may hold, as text: 8 MiB, what the splitter keeps of a document at most. No Kubernetes
 * object comes near it: the apiserver takes request bodies of at most 3 MiB and etcd stores objects of at most
 * 1.5 MiB; written as YAML, indentation and comments can double an object's JSON size.
 */
export const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

/**
 * The most YAML tokens one document may hold: 1,000,000. What a document costs grows with its tokens, not its bytes
 * (manifests/parse.ts): its syntax tree, and for a patched pod template the tree `stringify` builds to print it.
 * Measured on a 24 GiB host (whose V8 lets the young generation grow to 134 MB): a Deployment of 890,000 tokens
 * (4 MiB, an injected env list of 46,000 entries) peaks at 513 MB RSS; a document refused at the cap at ~380 MB.
 * A typical manifest has ~0.3 tokens per byte, so this admits ~3 MB of Deployments or CRD schemas.
 */
export const MAX_DOCUMENT_TOKENS = 1_000_000;

export interface DocumentLimits {
  bytes: number;
  tokens: number;
}

const DOCUMENT_LIMITS: Readonly<DocumentLimits> = { bytes: MAX_DOCUMENT_BYTES, tokens: MAX_DOCUMENT_TOKENS };

export interface ParsedDoc {
  index: number;
  value: Record<string, unknown> | null;
  /** The document as the `yaml` package prints it back, without its `---`: for documents passed through. */
  text(): string;
  /** Bytes of the input read up to the end of this document (progress). */
  bytesRead: number;
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const count = (n: number) => n.toLocaleString('en-US');

/** The documents of one piece of the stream (none for comments alone), numbered from `first`. */
function parsePiece(
  source: string,
  piece: Piece & { kind: 'text' },
  first: number,
  bytesRead: number,
  maxTokens: number,
): ParsedDoc[] {
  let docs: ReturnType<typeof parseDocuments>;
  try {
    docs = parseDocuments(piece.text, maxTokens);
  } catch (err) {
    if (!(err instanceof TooManyTokens)) throw err;
    throw new InputError(
      `${source}: document ${first + 1} (from line ${piece.line}): more than ${count(maxTokens)} YAML tokens in ` +
        `${mib(piece.bytes)} MiB (${count(piece.bytes)} bytes), over the limit on one document`,
    );
  }
  return docs.map((doc, i) => {
    const index = first + i;
    const invalid = (message: string) =>
      new InputError(`${source}: document ${index + 1}: invalid YAML: ${message.split('\n')[0]}`);
    const err = doc.errors[0];
    if (err) throw invalid(err.message);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      // An alias to an anchor it cannot see, or more aliases than maxAliasCount (a billion-laughs document).
      throw invalid((e as Error).message);
    }
    // Re-printed without line folding and without its own `---`: the writer joins documents with `---`.
    const text = () => doc.toString({ lineWidth: 0 }).replace(/^---\n/, '');
    if (value === null || value === undefined) return { index, text, value: null, bytesRead };
    const why = notAnObject(value);
    if (why) throw new InputError(`${source}: document ${index + 1}: not a Kubernetes object: ${why}`);
    return { index, text, value: value as Record<string, unknown>, bytesRead };
  });
}

function tooLarge(source: string, index: number, piece: Piece, limit: number): InputError {
  return new InputError(
    `${source}: document ${index + 1} (from line ${piece.line}): ${mib(piece.bytes)} MiB (${count(piece.bytes)} bytes), ` +
      `over the ${mib(limit)} MiB limit on one document (the apiserver takes at most 3 MiB per object)`,
  );
}

/** The documents of a YAML stream, parsed one at a time as its bytes arrive. */
export async function* readDocuments(
  source: string,
  chunks: AsyncIterable<Uint8Array>,
  limits: Readonly<DocumentLimits> = DOCUMENT_LIMITS,
): AsyncGenerator<ParsedDoc> {
  const splitter = new DocumentSplitter(limits.bytes);
  let index = 0;
  let bytesRead = 0;
  function* take(pieces: Piece[]): Generator<ParsedDoc> {
    for (const piece of pieces) {
      bytesRead += piece.bytes;
      if (piece.kind === 'too_large') throw tooLarge(source, index, piece, limits.bytes);
      const docs = parsePiece(source, piece, index, bytesRead, limits.tokens);
      index += docs.length;
      yield* docs;
    }
  }
  for await (const chunk of chunks) yield* take(splitter.push(chunk));
  yield* take(splitter.end());
}
