// The seccomp rules that keep a container from switching to the proxy's identity, merged into the policy the
// container has (none: Kubernetes' default Unconfined; the runtime's default; a Localhost profile).
//
// Each set*id syscall gets one rule per argument naming a UID or GID: EPERM when the argument's low 32 bits are the
// proxy's ID (SCMP_CMP_MASKED_EQ: the kernel reads uid_t, 32 bits, from a 64-bit register, so setuid(0x100000539)
// is setuid(1337) and a plain equality would miss it).
//
// How libseccomp (2.5.4, under runc 1.1.5) combines rules, measured with runc on this machine kind
// (docs/security.md): an unconditional rule for a syscall swallows every conditional rule for it, whatever their
// order or action — so an allowlist's plain "setuid: ALLOW" would silently void ours. Where the policy allows one
// of these syscalls unconditionally, the allow is therefore rewritten as a conditional one that always holds
// (argument 0 >= 0); with both conditional, a call matching our EPERM rule gets EPERM, any other is allowed.
// A syscall the policy already denies outright keeps its rule; one it denies by default action needs nothing.
//
// runc also drops, as redundant, any rule whose action and errno equal the policy's default action (measured: an
// allowlist defaulting to ERRNO/EPERM, like containerd's RuntimeDefault, lost our EPERM rules and let setuid(1337)
// through). And NRI applies an adjusted policy without its default errno (nri v0.12.3 runtime-tools/generate
// AdjustSeccompPolicy copies every field but DefaultErrnoRet), so a default ERRNO becomes EPERM whatever it was.
// Against a default ERRNO our rules therefore answer EACCES, which runc keeps; against a permitting default, EPERM,
// what a set*id call without the right returns.
package main

import (
	"slices"

	"github.com/containerd/nri/pkg/api"
)

// setIDCalls: each set*id syscall and the argument positions that name a UID or GID (x86's 16-bit-era *32 twins
// included: a 64-bit container can make 32-bit syscalls where the kernel has IA-32 emulation; libseccomp skips
// names an architecture does not have).
var setIDCalls = []struct {
	name string
	args []uint32
	gid  bool
}{
	{"setuid", []uint32{0}, false}, {"setuid32", []uint32{0}, false},
	{"setreuid", []uint32{0, 1}, false}, {"setreuid32", []uint32{0, 1}, false},
	{"setresuid", []uint32{0, 1, 2}, false}, {"setresuid32", []uint32{0, 1, 2}, false},
	{"setfsuid", []uint32{0}, false}, {"setfsuid32", []uint32{0}, false},
	{"setgid", []uint32{0}, true}, {"setgid32", []uint32{0}, true},
	{"setregid", []uint32{0, 1}, true}, {"setregid32", []uint32{0, 1}, true},
	{"setresgid", []uint32{0, 1, 2}, true}, {"setresgid32", []uint32{0, 1, 2}, true},
	{"setfsgid", []uint32{0}, true}, {"setfsgid32", []uint32{0}, true},
}

const (
	actAllow   = "SCMP_ACT_ALLOW"
	actErrno   = "SCMP_ACT_ERRNO"
	epermCode  = 1
	eaccesCode = 13
	// uid_t and gid_t are 32 bits: compare only those.
	idMask = 0xffffffff
)

// archs: the architectures of a new policy, as containerd's default profile lists them for the host.
var archs = map[string][]string{
	"amd64": {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"},
	"arm64": {"SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"},
}

// permits: actions under which the call goes ahead (a listener may let it: NOTIFY counts as permitting).
func permits(action string) bool {
	return action == actAllow || action == "SCMP_ACT_LOG" || action == "SCMP_ACT_NOTIFY"
}

// DenySetID returns `policy` (nil: none) with every set*id call to `uids`/`gids` failing with EPERM.
func DenySetID(policy *api.LinuxSeccomp, uids, gids []uint32, arch string) *api.LinuxSeccomp {
	out := &api.LinuxSeccomp{DefaultAction: actAllow, Architectures: archs[arch]}
	if policy != nil {
		out = cloneSeccomp(policy)
	}
	errno := uint32(epermCode)
	if out.DefaultAction == actErrno {
		errno = eaccesCode
	}
	for _, call := range setIDCalls {
		ids := uids
		if call.gid {
			ids = gids
		}
		if len(ids) == 0 || !conditionalize(out, call.name) {
			continue
		}
		for _, id := range ids {
			for _, arg := range call.args {
				out.Syscalls = append(out.Syscalls, &api.LinuxSyscall{
					Names:    []string{call.name},
					Action:   actErrno,
					ErrnoRet: &api.OptionalUInt32{Value: errno},
					Args:     []*api.LinuxSeccompArg{{Index: arg, Value: idMask, ValueTwo: uint64(id), Op: "SCMP_CMP_MASKED_EQ"}},
				})
			}
		}
	}
	return out
}

// conditionalize rewrites every unconditional permitting rule for `name` into an always-true conditional one, and
// says whether the call can go ahead at all (false: the policy denies it outright, nothing to add).
func conditionalize(p *api.LinuxSeccomp, name string) bool {
	allowed := permits(p.DefaultAction)
	var added []*api.LinuxSyscall
	for _, s := range p.Syscalls {
		if !slices.Contains(s.Names, name) {
			continue
		}
		if len(s.Args) > 0 {
			allowed = allowed || permits(s.Action)
			continue
		}
		if !permits(s.Action) {
			return false
		}
		allowed = true
		s.Names = slices.DeleteFunc(slices.Clone(s.Names), func(n string) bool { return n == name })
		added = append(added, &api.LinuxSyscall{
			Names:    []string{name},
			Action:   s.Action,
			ErrnoRet: s.ErrnoRet,
			Args:     []*api.LinuxSeccompArg{{Index: 0, Value: 0, Op: "SCMP_CMP_GE"}},
		})
	}
	p.Syscalls = slices.DeleteFunc(p.Syscalls, func(s *api.LinuxSyscall) bool { return len(s.Names) == 0 })
	p.Syscalls = append(p.Syscalls, added...)
	return allowed
}

func cloneSeccomp(p *api.LinuxSeccomp) *api.LinuxSeccomp {
	out := &api.LinuxSeccomp{
		DefaultAction:    p.DefaultAction,
		DefaultErrno:     p.DefaultErrno,
		Architectures:    slices.Clone(p.Architectures),
		Flags:            slices.Clone(p.Flags),
		ListenerPath:     p.ListenerPath,
		ListenerMetadata: p.ListenerMetadata,
	}
	for _, s := range p.Syscalls {
		c := &api.LinuxSyscall{Names: slices.Clone(s.Names), Action: s.Action, ErrnoRet: s.ErrnoRet}
		for _, a := range s.Args {
			c.Args = append(c.Args, &api.LinuxSeccompArg{Index: a.Index, Value: a.Value, ValueTwo: a.ValueTwo, Op: a.Op})
		}
		out.Syscalls = append(out.Syscalls, c)
	}
	return out
}
