#!/usr/bin/env node
// Entry shim. A checkout runs the TypeScript sources by Node's type stripping (Node >= 24); the image ships no
// sources, only their JavaScript compiled to dist/ (`npm run build`), which starts in half the time and memory:
// every injected validator pays its start. Which one runs is decided by what is there, never by a flag.
import { existsSync } from 'node:fs';

const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `meshgate needs Node.js >= 24 (this is ${process.version}); run it through npm scripts or node_modules/.bin/node\n`,
  );
  process.exit(2);
}
// A reader that stops early (`meshgate check-node | head -1`) closes the pipe: the next write fails with EPIPE.
// That is the reader's choice, not an error of ours: drop further output quietly and finish with the command's
// own exit code, as `cat` or `kubectl` would end without a trace. Any other stream error still surfaces.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
  });
}
const fromSource = existsSync(new URL('../src/cli/main.ts', import.meta.url));
const { main } = await import(fromSource ? '../src/cli/main.ts' : '../dist/cli/main.js');
process.exitCode = await main(process.argv.slice(2));
