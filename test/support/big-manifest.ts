/**
 * A large multi-document manifest for `meshgate inject`/`explain` (issue 24: a 35 MB manifest took 46 s and
 * 1.3 GB): the shared corpus's manifests that mesh custom injects without refusal, joined into one block, repeated
 * until the file reaches the size asked for. What the CLI must write for it follows from the block's own output,
 * repeated the same number of times, so a test checks the whole output without holding a second copy of it.
 */
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { injectCommand } from '../../src/cli/inject.ts';
import { memoryIO } from '../../src/cli/io.ts';

const MANIFESTS = new URL('../../../shared/corpus/manifests/', import.meta.url);

export interface BigManifest {
  bytes: number;
  /** How many times the block was written. */
  copies: number;
  /** Documents in the file (the block's documents × copies). */
  documents: number;
  /** The block's inject output: the file's output is `copies` of it joined by `---\n`. */
  blockOutput: string;
}

/** Inject's output for `text`, or undefined when inject refuses it. */
async function injectText(text: string, args: string[]): Promise<string | undefined> {
  const io = memoryIO(text);
  return (await injectCommand([...args, '-f', '-'], io)) === 0 ? io.out : undefined;
}

/**
 * The block: each corpus manifest that injects on its own, without a leading `---` (the join adds one), with a
 * trailing newline; and its output.
 */
export async function corpusBlock(args: string[]): Promise<{ text: string; output: string; documents: number }> {
  const parts: string[] = [];
  for (const file of readdirSync(MANIFESTS)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    const text = readFileSync(new URL(file, MANIFESTS), 'utf8')
      .replace(/^---\n/, '')
      .replace(/\n*$/, '\n');
    if ((await injectText(text, args)) !== undefined) parts.push(text);
  }
  const text = parts.join('---\n');
  const output = await injectText(text, args);
  if (output === undefined) throw new Error('the corpus block does not inject as a whole');
  return { text, output, documents: output.split(/^---$/m).length };
}

/** Writes a manifest of at least `minBytes` to `file`, from the corpus block, and says what inject must write. */
export async function writeBigManifest(file: string, minBytes: number, args: string[]): Promise<BigManifest> {
  const block = await corpusBlock(args);
  const unit = Buffer.from(block.text);
  const copies = Math.ceil(minBytes / (unit.length + 4));
  const fd = openSync(file, 'w');
  try {
    for (let i = 0; i < copies; i++) {
      if (i > 0) writeSync(fd, '---\n');
      writeSync(fd, unit);
    }
  } finally {
    closeSync(fd);
  }
  return {
    bytes: copies * unit.length + (copies - 1) * 4,
    copies,
    documents: block.documents * copies,
    blockOutput: block.output,
  };
}
