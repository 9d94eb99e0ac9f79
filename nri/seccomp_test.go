package main

import (
	"slices"
	"testing"

	"github.com/containerd/nri/pkg/api"
)

// rulesFor lists the (action, args) of every rule naming `name`.
func rulesFor(p *api.LinuxSeccomp, name string) []*api.LinuxSyscall {
	var out []*api.LinuxSyscall
	for _, s := range p.Syscalls {
		if slices.Contains(s.Names, name) {
			out = append(out, s)
		}
	}
	return out
}

func TestDenySetIDWithoutPolicy(t *testing.T) {
	p := DenySetID(nil, []uint32{1337}, []uint32{1337}, "amd64")
	if p.DefaultAction != actAllow || !slices.Equal(p.Architectures, archs["amd64"]) {
		t.Fatalf("a new policy allows by default on the host's architectures, got %s %v", p.DefaultAction, p.Architectures)
	}
	setresuid := rulesFor(p, "setresuid")
	if len(setresuid) != 3 {
		t.Fatalf("setresuid: one rule per argument, got %d", len(setresuid))
	}
	for i, r := range setresuid {
		a := r.Args[0]
		if r.Action != actErrno || r.ErrnoRet.GetValue() != epermCode || a.Index != uint32(i) ||
			a.Op != "SCMP_CMP_MASKED_EQ" || a.Value != idMask || a.ValueTwo != 1337 {
			t.Fatalf("rule %d: %+v %+v", i, r, a)
		}
	}
	if len(rulesFor(p, "setgid")) != 1 || len(rulesFor(p, "setfsgid32")) != 1 {
		t.Fatal("the GID calls are denied too")
	}
}

func TestDenySetIDNoGID(t *testing.T) {
	p := DenySetID(nil, []uint32{2102}, nil, "arm64")
	if len(rulesFor(p, "setgid")) != 0 || len(rulesFor(p, "setuid")) != 1 {
		t.Fatal("Linkerd exempts no GID: only the UID calls get rules")
	}
	if !slices.Equal(p.Architectures, archs["arm64"]) {
		t.Fatalf("arm64 architectures, got %v", p.Architectures)
	}
}

// An allowlist like containerd's RuntimeDefault: default ERRNO (EPERM), setuid allowed unconditionally.
func allowlist(errno *api.OptionalUInt32) *api.LinuxSeccomp {
	return &api.LinuxSeccomp{
		DefaultAction: actErrno,
		DefaultErrno:  errno,
		Architectures: []string{"SCMP_ARCH_X86_64"},
		Syscalls: []*api.LinuxSyscall{
			{Names: []string{"read", "setuid", "setgid", "write"}, Action: actAllow},
			{Names: []string{"kexec_load"}, Action: actErrno},
		},
	}
}

func TestDenySetIDInAllowlist(t *testing.T) {
	in := allowlist(nil)
	p := DenySetID(in, []uint32{1337}, []uint32{1337}, "amd64")
	if !slices.Equal(in.Syscalls[0].Names, []string{"read", "setuid", "setgid", "write"}) {
		t.Fatal("the input policy was changed")
	}
	if !slices.Equal(p.Syscalls[0].Names, []string{"read", "write"}) {
		t.Fatalf("the unconditional allow keeps only the other calls, got %v", p.Syscalls[0].Names)
	}
	setuid := rulesFor(p, "setuid")
	if len(setuid) != 2 || setuid[0].Action != actAllow || setuid[0].Args[0].Op != "SCMP_CMP_GE" {
		t.Fatalf("setuid: an always-true conditional allow, then the deny; got %+v", setuid)
	}
	// The default answers EPERM: runc would drop an EPERM rule as redundant, so ours answer EACCES.
	if setuid[1].Action != actErrno || setuid[1].ErrnoRet.GetValue() != eaccesCode {
		t.Fatalf("the deny answers EACCES against an EPERM default, got %+v", setuid[1])
	}
	if len(rulesFor(p, "setresuid")) != 0 {
		t.Fatal("a call the allowlist does not allow needs no rule")
	}
	if !slices.Equal(p.Architectures, []string{"SCMP_ARCH_X86_64"}) {
		t.Fatal("an existing policy keeps its architectures")
	}
	// NRI drops the default errno when it applies the policy (EPERM then): EACCES whatever the input said.
	other := DenySetID(allowlist(&api.OptionalUInt32{Value: 38}), []uint32{1337}, nil, "amd64")
	if r := rulesFor(other, "setuid"); r[1].ErrnoRet.GetValue() != eaccesCode {
		t.Fatalf("against any default ERRNO ours answer EACCES, got %+v", r[1])
	}
}

func TestDenySetIDKeepsOutrightDenials(t *testing.T) {
	in := &api.LinuxSeccomp{
		DefaultAction: actAllow,
		Syscalls:      []*api.LinuxSyscall{{Names: []string{"setuid"}, Action: "SCMP_ACT_KILL_PROCESS"}},
	}
	p := DenySetID(in, []uint32{1337}, nil, "amd64")
	if r := rulesFor(p, "setuid"); len(r) != 1 || r[0].Action != "SCMP_ACT_KILL_PROCESS" {
		t.Fatalf("setuid stays killed outright, got %+v", r)
	}
	if len(rulesFor(p, "setreuid")) != 2 {
		t.Fatal("the calls the default allows get their rules")
	}
}
