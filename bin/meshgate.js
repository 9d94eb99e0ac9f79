#!/usr/bin/env node
// Entry shim: meshgate's sources are TypeScript run directly by Node's type stripping (Node >= 24).
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(`meshgate needs Node.js >= 24 (this is ${process.version}); run it through npm scripts or node_modules/.bin/node\n`);
  process.exit(2);
}
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
