// The NRI plugin's seccomp rules (nri/seccomp.go) under the real runc (Debian's 1.1.5, libseccomp 2.5.4, as root):
// the policy `meshgate-nri --print-seccomp` prints — through NRI's own adjustment code, so what containerd would hand
// runc — is loaded by runc into a container whose root process tries every set*id call (setid-probe.c). Each policy
// the plugin meets: none (Kubernetes' default Unconfined), an allowlist like the runtime's default profile (ERRNO by
// default, the set*id calls allowed unconditionally), and a permissive profile that allows setuid explicitly.
// The control row shows what the rules prevent: the same allowlist without them lets setuid(1337) through.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMeshBuild } from '../meshbin/binaries.ts';

const PROBE_SRC = join(import.meta.dirname, 'setid-probe.c');
const CALLS = [
  'setuid(1000)',
  'setuid(1337)',
  'setuid(0x100000539)',
  'setreuid(-1,1337)',
  'setresuid(-1,-1,1337)',
  'setresuid(1000,1000,1000)',
  'setfsuid(1337)',
  'setgid(1337)',
  'setresgid(1337,-1,-1)',
  'setfsgid(1337)',
  'setgid(1000)',
];
/** What must still work: switching to an ID that is not the proxy's. */
const ALLOWED = new Set(['setuid(1000)', 'setresuid(1000,1000,1000)', 'setgid(1000)']);

/** What runc needs to start the probe and exit; the set*id calls are added per case. */
const BASE_CALLS = [
  'execve',
  'brk',
  'arch_prctl',
  'set_tid_address',
  'set_robust_list',
  'rseq',
  'prlimit64',
  'mprotect',
  'mmap',
  'munmap',
  'readlink',
  'uname',
  'getrandom',
  'clone',
  'clone3',
  'fork',
  'vfork',
  'wait4',
  'write',
  'writev',
  'exit',
  'exit_group',
  'getuid',
  'geteuid',
  'getgid',
  'getegid',
  'fstat',
  'newfstatat',
  'ioctl',
  'read',
  'close',
  'rt_sigaction',
  'rt_sigprocmask',
  'rt_sigreturn',
  'futex',
  'getpid',
  'gettid',
  'openat',
  'fcntl',
  'capget',
  'capset',
  'prctl',
  'setgroups',
  'fstatfs',
  'statfs',
  'close_range',
  'getppid',
  'chdir',
  'fchdir',
  'getcwd',
  'nanosleep',
  'epoll_pwait',
  'sched_yield',
  'tgkill',
  'kill',
  'sigaltstack',
  'madvise',
  'getdents64',
  'dup3',
  'faccessat2',
  'pread64',
];
const SETID = ['setuid', 'setreuid', 'setresuid', 'setfsuid', 'setgid', 'setregid', 'setresgid', 'setfsgid'];
const ARCHS = ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'];

const allowlist = {
  defaultAction: 'SCMP_ACT_ERRNO',
  architectures: ARCHS,
  syscalls: [{ names: [...BASE_CALLS, ...SETID], action: 'SCMP_ACT_ALLOW' }],
};
const permissive = { defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['setuid'], action: 'SCMP_ACT_ALLOW' }] };

let work: string;
let nri: string;
beforeAll(() => {
  nri = findMeshBuild('nri').bin('meshgate-nri');
  work = mkdtempSync(join(tmpdir(), 'mg-nri-runc-'));
  mkdirSync(join(work, 'rootfs'));
  execFileSync('gcc', ['-static', '-O2', '-Wall', '-Werror', '-o', join(work, 'rootfs', 'probe'), PROBE_SRC]);
  execFileSync('runc', ['spec', '--bundle', work]);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The policy the plugin gives a guarded container that had `policy` (null: none). */
function adjusted(policy: object | null): object {
  const out = execFileSync(
    nri,
    ['--proxy-uid', '1337', '--proxy-gid', '1337', '--mesh-container', 'istio-proxy', '--print-seccomp', '-'],
    { input: JSON.stringify(policy) },
  );
  return JSON.parse(out.toString());
}

let serial = 0;
/** Runs the probe as root with CAP_SETUID/CAP_SETGID under `seccomp`; each call's outcome. */
function probe(seccomp: object): Record<string, string> {
  const spec = JSON.parse(readFileSync(join(work, 'config.json'), 'utf8'));
  spec.root = { path: join(work, 'rootfs'), readonly: true };
  spec.process.terminal = false;
  spec.process.args = ['/probe'];
  for (const set of ['bounding', 'effective', 'permitted'])
    spec.process.capabilities[set] = [...spec.process.capabilities[set], 'CAP_SETUID', 'CAP_SETGID'];
  spec.linux.seccomp = seccomp;
  const bundle = join(work, `b${++serial}`);
  mkdirSync(bundle);
  writeFileSync(join(bundle, 'config.json'), JSON.stringify(spec));
  const r = spawnSync('runc', ['--root', join(work, 'runc'), 'run', `mg-nri-${process.pid}-${serial}`], {
    cwd: bundle,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(`runc run failed (${r.status}): ${r.stderr}`);
  return Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(' ') as [string, string]),
  );
}

describe("the NRI plugin's set*id rules under the real runc", () => {
  const cases: Array<[string, object | null]> = [
    ['no policy (Unconfined)', null],
    ["an allowlist like the runtime's default (ERRNO by default)", allowlist],
    ['a permissive profile that allows setuid explicitly', permissive],
  ];
  it.each(cases)('%s: the proxy ID is refused, any other works', (_n, policy) => {
    const got = probe(adjusted(policy));
    for (const call of CALLS) {
      if (ALLOWED.has(call)) expect(got[call], call).toBe('ok');
      else expect(got[call], call).toMatch(/^E(PERM|ACCES)$/);
    }
  });

  it('control: the allowlist alone lets setuid(1337) and setfsuid(1337) through', () => {
    const got = probe(allowlist);
    expect(got['setuid(1337)']).toBe('ok');
    expect(got['setfsuid(1337)']).toBe('ok');
  });
});
