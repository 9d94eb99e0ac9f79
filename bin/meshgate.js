#!/usr/bin/env node
// Entry shim: meshgate's sources are TypeScript run directly by Node's type stripping (Node >= 24).
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
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
