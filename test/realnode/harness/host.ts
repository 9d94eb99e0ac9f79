// Host-wide state of a real-node run: its run dir, its cgroups, the sysctls the kubelet rewrites and the host paths
// kubelet/containerd hardcode. Everything written here is what test/realnode/cleanup.sh removes; keep the two in
// sync (paths and file formats are described at the top of cleanup.sh).
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of all real-node state. Short on purpose: containerd's socket path must stay under 108 bytes. */
export const BASE = process.env.MESHGATE_REALNODE_BASE || '/tmp/meshgate-realnode';
/** Name of the top cgroup in every hierarchy: /sys/fs/cgroup/<c>/meshgate-realnode/<run>/... */
export const CGROUP_NAME = 'meshgate-realnode';
export const LOCK_FILE = join(BASE, 'lock');
export const CLEANUP_SCRIPT = fileURLToPath(new URL('../cleanup.sh', import.meta.url));

/**
 * What the kubelet rewrites at start (pkg/kubelet/cm/container_manager_linux.go setupKernelTunables) unless
 * protectKernelDefaults, which would make it refuse to start on this VM instead. All are host-wide, not per netns.
 */
export const KUBELET_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
];

/**
 * Host paths that kubelet or containerd use no matter what their config says: the device-plugin dir
 * (/var/lib/kubelet/device-plugins), the /var/log/containers symlinks, containerd's shim sockets
 * (/run/containerd/s) and libcni's result cache (/var/lib/cni).
 */
export const HARDCODED_PATHS = ['/var/lib/kubelet', '/var/log/containers', '/run/containerd', '/var/lib/cni'];

const sysctlPath = (name: string) => join('/proc/sys', ...name.split('.'));
export const readSysctl = (name: string) => readFileSync(sysctlPath(name), 'utf8').trim();

/** Runs cleanup.sh for one run or `--all`; returns its log lines (it never fails the caller). */
export function runCleanup(target: string): string {
  const r = spawnSync('bash', [CLEANUP_SCRIPT, target], {
    encoding: 'utf8',
    env: { ...process.env, MESHGATE_REALNODE_BASE: BASE },
  });
  return r.status === 0
    ? `${r.stdout}${r.stderr}`
    : `cleanup.sh ${target} failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`;
}

/**
 * Records, before anything starts, what cleanup.sh must restore: sysctl values and which hardcoded paths did not
 * exist (plus, for check-leftovers.sh, a never-removed sysctl baseline and this run's netns). Both are written only
 * if absent, so a killed run's record (the true originals) is never replaced
 * by values its kubelet already changed; cleanup.sh --all at the start of a run consumes them first anyway.
 */
export function recordHostState(): { sysctls: Record<string, string> } {
  mkdirSync(BASE, { recursive: true });
  const saved = join(BASE, 'sysctls.saved');
  const sysctls = Object.fromEntries(KUBELET_SYSCTLS.map((n) => [n, readSysctl(n)]));
  const lines = Object.entries(sysctls)
    .map(([k, v]) => `${k} ${v}\n`)
    .join('');
  if (!existsSync(saved)) writeFileSync(saved, lines);
  // Never removed: check-leftovers.sh compares the machine with it.
  const baseline = join(BASE, 'sysctls.baseline');
  if (!existsSync(baseline)) writeFileSync(baseline, lines);
  writeFileSync(join(BASE, 'last-netns'), readlinkSync('/proc/self/ns/net'));
  const created = join(BASE, 'created-paths');
  if (!existsSync(created))
    writeFileSync(
      created,
      HARDCODED_PATHS.filter((p) => !existsSync(p))
        .map((p) => `${p}\n`)
        .join(''),
    );
  return { sysctls };
}

/** sysctls whose value differs from `before` (for the end-of-run report: all must be restored). */
export function changedSysctls(before: Record<string, string>): string[] {
  return Object.entries(before)
    .filter(([k, v]) => readSysctl(k) !== v)
    .map(([k, v]) => `${k}=${readSysctl(k)} (was ${v})`);
}

/** Every cgroup v1 hierarchy mounted under /sys/fs/cgroup (cgroup2's "unified" holds no controllers here). */
export function hierarchies(): string[] {
  return readdirSync('/sys/fs/cgroup').filter(
    (c) => c !== 'unified' && existsSync(join('/sys/fs/cgroup', c, 'cgroup.procs')),
  );
}

/**
 * Creates `rel` (e.g. meshgate-realnode/<run>/rn-1/runtime) in every hierarchy. In cpuset a new cgroup starts with
 * no CPUs and no memory nodes, so each level copies them from its parent, and clone_children makes the cgroups
 * kubelet and runc create below inherit them too.
 */
export function makeCgroup(rel: string): void {
  for (const h of hierarchies()) {
    let path = join('/sys/fs/cgroup', h);
    for (const part of rel.split('/')) {
      const parent = path;
      path = join(path, part);
      if (existsSync(path)) continue;
      mkdirSync(path);
      if (h === 'cpuset') {
        for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(path, f), readFileSync(join(parent, f)));
        writeFileSync(join(path, 'cgroup.clone_children'), '1');
      }
    }
  }
}

/** Moves a process (and so its future children) into `rel` in every hierarchy. */
export function joinCgroup(rel: string, pid = process.pid): void {
  for (const h of hierarchies()) appendFileSync(join('/sys/fs/cgroup', h, rel, 'cgroup.procs'), `${pid}\n`);
}

/**
 * A shell prefix that moves itself into `rel` in every hierarchy, then execs the real command: used as
 * `sh -c <prefix> sh <bin> <args...>` so the process starts inside its cgroup and never runs outside it.
 */
export function inCgroupScript(rel: string): string {
  return `for h in ${hierarchies().join(' ')}; do echo $$ > /sys/fs/cgroup/$h/${rel}/cgroup.procs || exit 97; done; exec "$@"`;
}

/** Moves this process back to the root of every hierarchy (before cleanup.sh empties the run's cgroups). */
export function leaveCgroups(pid = process.pid): void {
  for (const h of hierarchies()) appendFileSync(join('/sys/fs/cgroup', h, 'cgroup.procs'), `${pid}\n`);
}

/** What a finished run left behind: cgroup dirs, mounts, its run dir, changed sysctls. Empty means clean. */
export function leftovers(runId: string, runDir: string, sysctlsBefore: Record<string, string>): string[] {
  const found: string[] = [];
  for (const h of readdirSync('/sys/fs/cgroup')) {
    // cgroup2's unified too: runc mirrors container cgroups there
    const p = join('/sys/fs/cgroup', h, CGROUP_NAME, runId);
    if (existsSync(p)) found.push(`cgroup ${p}`);
  }
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m) => m?.startsWith(runDir));
  found.push(...mounts.map((m) => `mount ${m}`));
  if (existsSync(runDir)) found.push(`dir ${runDir}`);
  found.push(...changedSysctls(sysctlsBefore).map((s) => `sysctl ${s}`));
  return found;
}

/**
 * The run dir is a tmpfs: every node's containerd root (image content + unpacked snapshots, ~1 GB with meshgate's
 * image on two nodes), kubelet root and logs live in memory, so a run does not load the shared disk and teardown
 * frees it all with one lazy unmount instead of an rm -rf of tens of thousands of files (which took 9-17 s here).
 * 4 GiB caps it well below the machine's 24 GiB; overlayfs works on tmpfs (d_type, trusted xattrs).
 */
export function mountRunDir(runDir: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4g,mode=0755', 'meshgate-realnode', runDir]);
}
