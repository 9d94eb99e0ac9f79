// The guard's procfs parsers (src/agent/guard/proc.ts) on what kernels and runtimes really write.
import { describe, expect, it } from 'vitest';
import { parseCgroup, parseStatusIds } from '../../../src/agent/guard/proc.ts';
import { status } from './fake-node.ts';

const UID = '0b7e4c2a-91d3-4f6e-8a5b-1c2d3e4f5a6b';
const ID = `${'f'.repeat(56)}0123abcd`;

describe('parseCgroup finds the pod and container of a process', () => {
  const rows: Array<[string, string, { podUid: string; containerId: string } | undefined]> = [
    [
      'cgroup v1, cgroupfs driver (the real-node tier, kubelet cgroupRoot below the run)',
      `12:pids:/meshgate-realnode/r1/rn-1/kubepods/besteffort/pod${UID}/${ID}\n11:memory:/x\n`,
      { podUid: UID, containerId: ID },
    ],
    [
      'cgroup v1, systemd driver (underscores in the pod slice, containerd scope)',
      `5:pids:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID.replaceAll('-', '_')}.slice/cri-containerd-${ID}.scope\n`,
      { podUid: UID, containerId: ID },
    ],
    [
      'cgroup v2, guaranteed pod (no QoS level), read from another cgroup namespace',
      `0::/../../kubepods/pod${UID}/${ID}\n`,
      { podUid: UID, containerId: ID },
    ],
    [
      'CRI-O under systemd',
      `0::/kubepods.slice/kubepods-pod${UID.replaceAll('-', '_')}.slice/crio-${ID}.scope\n`,
      { podUid: UID, containerId: ID },
    ],
    [
      'CRI-O conmon: not a container',
      `0::/kubepods.slice/kubepods-pod${UID}.slice/crio-conmon-${ID}.scope\n`,
      undefined,
    ],
    ['the pod cgroup itself', `0::/kubepods/besteffort/pod${UID}\n`, undefined],
    ['a host service', '0::/system.slice/containerd.service\n', undefined],
    ['a container ID that is not 64 hex digits', `0::/kubepods/pod${UID}/abc\n`, undefined],
    ['empty', '', undefined],
  ];
  it.each(rows)('%s', (_n, text, owner) => {
    expect(parseCgroup(text)).toEqual(owner);
  });
});

describe('parseStatusIds reads real, effective, saved and filesystem IDs', () => {
  it('reads both lines', () => {
    expect(parseStatusIds(status(7, [0, 1337, 0, 1337], [0, 0, 0, 0]))).toEqual({
      uids: [0, 1337, 0, 1337],
      gids: [0, 0, 0, 0],
    });
  });
  it('is undefined when a line is cut off (the task exited while being read)', () => {
    expect(parseStatusIds('Name:\tx\nUid:\t0\t0\t0\t0\n')).toBeUndefined();
    expect(parseStatusIds('Uid:\t0\t0\n Gid:\t0\t0\t0\t0\n')).toBeUndefined();
  });
});
