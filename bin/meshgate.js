#!/usr/bin/env -S node --max-semi-space-size=2
// Entry shim. A checkout runs the TypeScript sources by Node's type stripping (Node >= 24); the image ships no
// sources, only their JavaScript compiled to dist/ (`npm run build`), which starts in half the time and memory:
// every injected validator pays its start. Which one runs is decided by what is there, never by a flag. Run as a
// command (npx meshgate), it takes the release's Node.js flags from its first line (scripts/release-cli.ts NODE_FLAGS).
import { existsSync } from 'node:fs';

const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `meshgate needs Node.js >= 24 (this is ${process.version}); run it through npm scripts or node_modules/.bin/node\n`,
  );
  process.exit(2);
}
const fromSource = existsSync(new URL('../src/cli/main.ts', import.meta.url));
const { runProcess } = await import(fromSource ? '../src/cli/main.ts' : '../dist/cli/main.js');
// runProcess also ends quietly when the reader of the output goes away (`meshgate … | head`).
process.exitCode = await runProcess(process.argv.slice(2));
