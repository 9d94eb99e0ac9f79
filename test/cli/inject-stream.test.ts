/**
 * How `inject` and `explain` read and write one document at a time (issue 24): the per-document limits and their
 * errors, output held back then streamed, progress with a fake clock, and the same output whatever the chunking
 * of the input. The 35 MB run is test/cli/inject-large.test.ts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { explainCommand as explain } from '../../src/cli/explain.ts';
import { injectCommand as inject } from '../../src/cli/inject.ts';
import { memoryIO } from '../../src/cli/io.ts';
import { MAX_DOCUMENT_BYTES, MAX_DOCUMENT_TOKENS } from '../../src/cli/documents.ts';
import { DocumentOutput, OUTPUT_HOLD_CHARS } from '../../src/cli/output.ts';
import { PROGRESS_AFTER_MS, PROGRESS_EVERY_MS, Progress } from '../../src/cli/progress.ts';
import { rawConfig } from '../support/config.ts';
import { corpusBlock } from '../support/big-manifest.ts';

const config = join(mkdtempSync(join(tmpdir(), 'meshgate-inject-stream-')), 'config.yaml');
writeFileSync(config, stringify(rawConfig('custom')));
const NODE_STATE = fileURLToPath(new URL('../golden/testdata/node-state-verified.yaml', import.meta.url));
const ARGS = ['--config', config, '--node-state', NODE_STATE, '-f', '-'];

const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;

async function cli(command: typeof inject, stdin: string, opts: { chunkBytes?: number; args?: string[] } = {}) {
  const io = memoryIO(stdin, {}, { chunkBytes: opts.chunkBytes });
  const code = await command([...ARGS, ...(opts.args ?? [])], io);
  return { code, out: io.out, err: io.err };
}

let block: Awaited<ReturnType<typeof corpusBlock>>;
beforeAll(async () => {
  block = await corpusBlock(['--config', config, '--node-state', NODE_STATE]);
});

describe('per-document limits', () => {
  it('a document over 8 MiB: exit 1 naming it, its first line and its size; nothing on stdout', async () => {
    const huge = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata:\n${`  k: ${'x'.repeat(1000)}\n`.repeat(9000)}`;
    const r = await cli(inject, `${service('a')}---\n${huge}---\n${service('b')}`);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    const bytes = Buffer.byteLength(`---\n${huge}`);
    expect(bytes).toBeGreaterThan(MAX_DOCUMENT_BYTES);
    expect(r.err).toBe(
      `meshgate inject: <stdin>: document 2 (from line 4): ${(bytes / 1024 / 1024).toFixed(1)} MiB ` +
        `(${bytes.toLocaleString('en-US')} bytes), over the 8.0 MiB limit on one document (the apiserver takes at ` +
        'most 3 MiB per object)\n',
    );
  });

  it('a document of more than a million YAML tokens: exit 1 naming it', async () => {
    const dense = `apiVersion: v1\nkind: List\nitems:\n${'- 1\n'.repeat(MAX_DOCUMENT_TOKENS / 4)}`;
    const r = await cli(explain, `${service('a')}---\n${dense}`);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      /^meshgate explain: <stdin>: document 2 \(from line 4\): more than 1,000,000 YAML tokens in 1\.0 MiB \([\d,]+ bytes\), over the limit on one document\n$/,
    );
  });

  it('an alias to an anchor of another document is invalid YAML, not a crash', async () => {
    const r = await cli(inject, 'apiVersion: v1\nkind: Service\nmetadata: {name: &n a}\n---\nkind: *n\n');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/<stdin>: document 2: invalid YAML: .*alias/i);
  });
});

describe('output: held back, then streamed', () => {
  it('holds the first characters back and writes them once the run succeeds', () => {
    const writes: string[] = [];
    const out = new DocumentOutput((t) => writes.push(t), '---\n', '', 20);
    out.add('a: 1\n');
    out.add('b: 2\n');
    expect(writes).toEqual([]);
    out.finish();
    expect(writes).toEqual(['a: 1\n---\nb: 2\n']);
    expect(out.partial()).toBe(false);
  });

  it('past the hold, writes each document as it comes, and says so after an error', () => {
    const writes: string[] = [];
    const out = new DocumentOutput((t) => writes.push(t), '---\n', '', 10);
    out.add('a: 1\n');
    out.add('b: 2222\n');
    expect(writes).toEqual(['a: 1\n---\nb: 2222\n']);
    out.add('c: 3\n');
    expect(writes).toEqual(['a: 1\n---\nb: 2222\n', '---\nc: 3\n']);
    expect(out.partial()).toBe(true);
  });

  it('writes ifEmpty when no document had output, and skips empty outputs', () => {
    const writes: string[] = [];
    const out = new DocumentOutput((t) => writes.push(t), '', '\n', 10);
    out.add('');
    out.finish();
    expect(writes).toEqual(['\n']);
  });

  it('an error after the hold: stdout has every document before it, whole; stderr says it is incomplete', async () => {
    const copies = Math.ceil(OUTPUT_HOLD_CHARS / block.output.length) + 1;
    const input = `${Array(copies).fill(block.text).join('---\n')}---\nkind: [\n`;
    const r = await cli(inject, input);
    expect(r.code).toBe(1);
    expect(r.out).toBe(Array(copies).fill(block.output).join('---\n'));
    expect(r.err).toBe(
      `meshgate inject: <stdin>: document ${copies * block.documents + 1}: invalid YAML: Flow sequence in block ` +
        'collection must be sufficiently indented and end with a ]; stdout is incomplete: it holds the output of ' +
        'every document before\n',
    );
  });
});

describe('the same output however the input arrives', () => {
  it('inject and explain over the corpus, in chunks of 1 byte, 7 bytes and 64 KiB', async () => {
    for (const command of [inject, explain]) {
      const whole = await cli(command, block.text, { chunkBytes: 1 << 16 });
      expect(whole.code, whole.err).toBe(0);
      for (const chunkBytes of [1, 7]) expect(await cli(command, block.text, { chunkBytes })).toEqual(whole);
    }
  });

  it('explain of an empty input is one empty line, as before', async () => {
    expect(await cli(explain, '')).toEqual({ code: 0, out: '\n', err: '' });
    expect(await cli(inject, '')).toEqual({ code: 0, out: '', err: '' });
  });
});

describe('progress', () => {
  function clock() {
    const c = { t: 0, lines: [] as string[] };
    return c;
  }

  it('says nothing for a run under 2 s', () => {
    const c = clock();
    const p = new Progress({ name: 'inject', write: (s) => c.lines.push(s), tty: true, now: () => c.t });
    c.t = PROGRESS_AFTER_MS - 1;
    p.update(10, 1000);
    p.end();
    expect(c.lines).toEqual([]);
  });

  it('on a terminal: one line redrawn, at most every 250 ms, ended by the final figures', () => {
    const c = clock();
    const mib = 1024 * 1024;
    const p = new Progress({
      name: 'inject',
      write: (s) => c.lines.push(s),
      tty: true,
      total: 10 * mib,
      now: () => c.t,
    });
    c.t = 2000;
    p.update(100, 2 * mib);
    c.t = 2100;
    p.update(110, 2.5 * mib);
    c.t = 2500;
    p.update(200, 5 * mib);
    c.t = 3000;
    p.update(300, 7 * mib);
    c.t = 4000;
    p.update(400, 10 * mib);
    p.end();
    // The last figures were drawn already: the end only closes the line.
    expect(c.lines).toEqual([
      '\r\x1b[Kmeshgate inject: 100 documents, 2.0 of 10.0 MiB (20%), 1.0 MiB/s, 2.0 s',
      '\r\x1b[Kmeshgate inject: 200 documents, 5.0 of 10.0 MiB (50%), 2.0 MiB/s, 2.5 s',
      '\r\x1b[Kmeshgate inject: 300 documents, 7.0 of 10.0 MiB (70%), 2.3 MiB/s, 3.0 s',
      '\r\x1b[Kmeshgate inject: 400 documents, 10.0 of 10.0 MiB (100%), 2.5 MiB/s, 4.0 s',
      '\n',
    ]);
  });

  it('elsewhere (--progress into a log): a line every 5 s; no total for a pipe', () => {
    const c = clock();
    const p = new Progress({ name: 'explain', write: (s) => c.lines.push(s), tty: false, now: () => c.t });
    for (let i = 1; i <= 40; i++) {
      c.t = i * 250 + 1750;
      p.update(i * 1000, i * 1024 * 1024);
    }
    expect(c.lines).toHaveLength(Math.floor((40 * 250 - 250) / PROGRESS_EVERY_MS) + 1);
    expect(c.lines[0]).toBe('meshgate explain: 1,000 documents, 1.0 MiB, 0.5 MiB/s, 2.0 s\n');
  });

  it('what a caller describes (meshgate check reading a large cluster): redrawn on tick(), ended by the last words', () => {
    const c = clock();
    let read = 0;
    const p = new Progress({
      name: 'check',
      write: (s) => c.lines.push(s),
      tty: true,
      now: () => c.t,
      describe: () => `${read.toLocaleString('en-US')} pods read`,
    });
    for (const [t, n] of [
      [1000, 500],
      [2000, 1500],
      [2100, 1600],
      [2400, 9000],
    ]) {
      c.t = t;
      read = n;
      p.tick();
    }
    // The last read comes too soon after a redraw to be drawn: the end draws it.
    c.t = 2450;
    read = 12_000;
    p.tick();
    p.end();
    expect(c.lines).toEqual([
      '\r\x1b[Kmeshgate check: 1,500 pods read, 2.0 s',
      '\r\x1b[Kmeshgate check: 9,000 pods read, 2.4 s',
      '\r\x1b[Kmeshgate check: 12,000 pods read, 2.5 s\n',
    ]);
  });

  it('--progress on a short run prints nothing; progress never goes to stdout', async () => {
    const plain = await cli(inject, service('a'));
    expect(plain.code).toBe(0);
    expect(await cli(inject, service('a'), { args: ['--progress'] })).toEqual({ ...plain, err: '' });
  });
});
