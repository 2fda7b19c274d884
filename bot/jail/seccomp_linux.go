package jail

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The sandbox's system call filter. Through the idmapped workspace the agent owns what the
// workspace's owner owns (root, or the runner's sudo-capable account): a set-uid or set-gid bit,
// or a file capability, that it put on a file there would make that file a way to the owner's
// privileges for anyone who runs it after the call (the sandbox mounts it nosuid; the host does
// not). The filter, installed by the call's init and inherited by everything the call starts,
// refuses to make them at all. It refuses the kernel's attack surface that would let a process
// get around it too. The rest is allowed: it is a list of refusals, not of permissions, so that
// every build tool keeps working.
//
// What is refused, and the answer (each chosen so that the programs agents run take their usual
// fallback, as under Docker's default profile, which refuses io_uring and the keyring calls
// too):
//   - chmod, fchmod, fchmodat, fchmodat2 whose mode has S_ISUID or S_ISGID: EPERM, what a
//     non-owner gets. A set-gid directory is refused too: it is harmless, but telling a directory
//     from a file would need the path, which a filter cannot read; no build needs one.
//   - creat, and open/openat with O_CREAT or O_TMPFILE, whose mode has S_ISUID or S_ISGID; mknod
//     and mknodat likewise: EPERM.
//   - openat2: ENOSYS. Its mode sits in a struct the filter cannot read; libc and Go fall back to
//     openat, which the filter can.
//   - setxattr, lsetxattr, fsetxattr, setxattrat: EOPNOTSUPP. The filter cannot read the
//     attribute's name, so security.capability cannot be told from user.*; "not supported" is
//     what a filesystem without extended attributes answers, which cp -a, tar, rsync and
//     Python's shutil take silently (an EPERM makes cp -a print an error for each file).
//   - User namespaces stay allowed, though the measured attack set its file capability as root
//     of a user namespace of its own: Codex's own sandbox (bubblewrap, for read-only reviews and
//     workspace-write) needs one, and the filter follows a process into every namespace it makes,
//     so setxattr and the set-id modes stay refused there too (the end-to-end test attacks from
//     one). clone3 is allowed for the same reason: refusing it would only hide flags that are
//     not refused.
//   - io_uring_setup, io_uring_enter, io_uring_register: ENOSYS. A ring's operations are not
//     system calls, so no filter sees them; libuv (node) falls back to threads.
//   - add_key, request_key, keyctl: ENOSYS, what a kernel without keyrings answers. A uid's
//     user keyring is the kernel's, not the call's: it outlives every process, and its owner can
//     take away even root's means to clear it, so the next run leasing the uid would read what
//     this one stored. The init joins the call to a fresh session keyring before this filter.
//   - Every system call of another ABI than the native one (i386's int 0x80 and x32 on x86_64,
//     arm32 on arm64) kills the process: the rules above are written in native numbers, and a
//     32-bit program is not something a build in the sandbox needs.
//
// The filter applies to the thread that installs it and whatever that thread forks: the init
// installs it on its locked thread just before forking the agent.

const (
	setIDBits = unix.S_ISUID | unix.S_ISGID
	// tmpfileBit is O_TMPFILE without the O_DIRECTORY it is defined with: an unnamed file,
	// created with the mode given, that linkat can name afterwards.
	tmpfileBit = unix.O_TMPFILE &^ unix.O_DIRECTORY
)

// syscallRule is one refusal: a system call, the arguments that make it refused (all must
// hold; none means always), and the errno it answers.
type syscallRule struct {
	name  string
	when  seccomp.ArgumentConditions
	errno unix.Errno
}

func bitsSet(arg uint32, bits uint64) seccomp.Condition {
	return seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: bits}
}

// refusedSyscalls lists the refusals, by name, for every ABI; syscallPolicy keeps those the
// native one has (arm64 has no chmod, open, creat or mknod, only their *at forms).
func refusedSyscalls() []syscallRule {
	var rules []syscallRule
	// mode is the argument holding the mode; flags the one holding open's flags (-1: none).
	for _, c := range []struct {
		name        string
		mode, flags int
	}{
		{"chmod", 1, -1}, {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
		{"creat", 1, -1}, {"mknod", 1, -1}, {"mknodat", 2, -1},
		{"open", 2, 1}, {"openat", 3, 2},
	} {
		mode := bitsSet(uint32(c.mode), setIDBits)
		if c.flags < 0 {
			rules = append(rules, syscallRule{c.name, seccomp.ArgumentConditions{mode}, unix.EPERM})
			continue
		}
		// open's mode is read only when it creates a file: a mode with the bits on an open
		// that creates nothing is no harm (and some runtimes pass one always).
		for _, creates := range []uint64{unix.O_CREAT, tmpfileBit} {
			rules = append(rules, syscallRule{c.name, seccomp.ArgumentConditions{bitsSet(uint32(c.flags), creates), mode}, unix.EPERM})
		}
	}
	for _, name := range []string{"setxattr", "lsetxattr", "fsetxattr", "setxattrat"} {
		rules = append(rules, syscallRule{name: name, errno: unix.EOPNOTSUPP})
	}
	for _, name := range []string{"openat2", "io_uring_setup", "io_uring_enter", "io_uring_register", "add_key", "request_key", "keyctl"} {
		rules = append(rules, syscallRule{name: name, errno: unix.ENOSYS})
	}
	return rules
}

// syscallPolicy is the filter's policy for the native ABI: one group of rules per errno, in the
// order first seen, everything else allowed.
func syscallPolicy(native *arch.Info) seccomp.Policy {
	policy := seccomp.Policy{DefaultAction: seccomp.ActionAllow}
	group := map[unix.Errno]int{}
	for _, r := range refusedSyscalls() {
		if _, ok := native.SyscallNames[r.name]; !ok {
			continue
		}
		i, ok := group[r.errno]
		if !ok {
			i = len(policy.Syscalls)
			group[r.errno] = i
			policy.Syscalls = append(policy.Syscalls, seccomp.SyscallGroup{Action: seccomp.ActionErrno | seccomp.Action(r.errno)})
		}
		g := &policy.Syscalls[i]
		if len(r.when) == 0 {
			g.Names = append(g.Names, r.name)
		} else {
			g.NamesWithCondtions = append(g.NamesWithCondtions, seccomp.NameWithConditions{Name: r.name, Conditions: r.when})
		}
	}
	return policy
}

// syscallFilter assembles the filter for the native ABI. The library's program lets a foreign
// ABI through to the default action (allow, here); a check of its own before it kills instead.
func syscallFilter() ([]unix.SockFilter, error) {
	native, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("system call filter: %w", err)
	}
	policy := syscallPolicy(native)
	prog, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("system call filter: %w", err)
	}
	const archOffset = 4 // struct seccomp_data: int nr; __u32 arch; ...
	prog = append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: archOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	}, prog...)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("system call filter: %w", err)
	}
	out := make([]unix.SockFilter, len(raw))
	for i, in := range raw {
		out[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	return out, nil
}

// installSyscallFilter puts the filter on the calling thread, which must have no_new_privs (or
// CAP_SYS_ADMIN); what the thread forks afterwards inherits it and can never drop it.
func installSyscallFilter() error {
	filter, err := syscallFilter()
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("install the system call filter: %w", errno)
	}
	return nil
}

// restrictAgent is the init's last step before it forks the agent, on the thread that forks it
// and after no_new_privs: a session keyring of the call's own instead of the studio's (which the
// agent would possess), then the system call filter.
func restrictAgent() error {
	if err := joinFreshSessionKeyring(); err != nil && !keyringsRefused(err) {
		return err
	}
	return installSyscallFilter()
}
