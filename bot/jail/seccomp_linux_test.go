package jail

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// syscallProbeArg0 makes the test binary the attacker: started under this name (in a sandbox's
// call or the uid jail), it makes each system call the filter refuses, in its working directory,
// and prints one line per attempt, "name: ok" or "name: ERRNO".
const syscallProbeArg0 = "studio-syscall-probe"

func init() {
	if len(os.Args) > 0 && os.Args[0] == syscallProbeArg0 {
		syscallProbe()
		syscall.Exit(0)
	}
}

func syscallProbe() {
	native, err := arch.GetInfo("")
	if err != nil {
		fmt.Println("arch:", err)
		return
	}
	p := func(s string) uintptr {
		b, _ := unix.BytePtrFromString(s)
		return uintptr(unsafe.Pointer(b))
	}
	fd, err := unix.Open("probe-file", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		fmt.Println("create probe-file:", err)
		return
	}
	val := []byte("v")
	how := unix.OpenHow{Flags: unix.O_RDONLY}
	xattr := struct {
		value       uint64
		size, flags uint32
	}{uint64(uintptr(unsafe.Pointer(&val[0]))), 1, 0}
	const atFDCWD = uintptr(0xffffffffffffff9c) // AT_FDCWD (-100)
	tries := []struct {
		label, name string
		args        [6]uintptr
	}{
		{"chmod-0755", "chmod", [6]uintptr{p("probe-file"), 0o755}},
		{"chmod-setuid", "chmod", [6]uintptr{p("probe-file"), 0o4755}},
		{"chmod-setgid", "chmod", [6]uintptr{p("probe-file"), 0o2755}},
		{"fchmod-setuid", "fchmod", [6]uintptr{uintptr(fd), 0o4755}},
		{"fchmodat-0700", "fchmodat", [6]uintptr{atFDCWD, p("probe-file"), 0o700}},
		{"fchmodat-setuid", "fchmodat", [6]uintptr{atFDCWD, p("probe-file"), 0o4755}},
		{"fchmodat2-setuid", "fchmodat2", [6]uintptr{atFDCWD, p("probe-file"), 0o4755, 0}},
		{"creat-setuid", "creat", [6]uintptr{p("creat-setuid"), 0o4755}},
		{"open-create-0644", "open", [6]uintptr{p("open-0644"), unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, 0o644}},
		{"open-create-setuid", "open", [6]uintptr{p("open-setuid"), unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, 0o4755}},
		{"openat-create-0644", "openat", [6]uintptr{atFDCWD, p("openat-0644"), unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, 0o644}},
		{"openat-create-setgid", "openat", [6]uintptr{atFDCWD, p("openat-setgid"), unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, 0o2755}},
		{"openat-tmpfile-setuid", "openat", [6]uintptr{atFDCWD, p("."), unix.O_TMPFILE | unix.O_WRONLY | unix.O_CLOEXEC, 0o4755}},
		{"openat-read-setuid-mode", "openat", [6]uintptr{atFDCWD, p("probe-file"), unix.O_RDONLY | unix.O_CLOEXEC, 0o4755}},
		{"mknod-setuid", "mknod", [6]uintptr{p("mknod-setuid"), unix.S_IFREG | 0o4755, 0}},
		{"mknodat-setgid", "mknodat", [6]uintptr{atFDCWD, p("mknodat-setgid"), unix.S_IFREG | 0o2755, 0}},
		{"setxattr", "setxattr", [6]uintptr{p("probe-file"), p("user.studio"), uintptr(unsafe.Pointer(&val[0])), 1, 0}},
		{"lsetxattr", "lsetxattr", [6]uintptr{p("probe-file"), p("user.studio"), uintptr(unsafe.Pointer(&val[0])), 1, 0}},
		{"fsetxattr", "fsetxattr", [6]uintptr{uintptr(fd), p("user.studio"), uintptr(unsafe.Pointer(&val[0])), 1, 0}},
		{"setxattrat", "setxattrat", [6]uintptr{atFDCWD, p("probe-file"), 0, p("user.studio"), uintptr(unsafe.Pointer(&xattr)), unsafe.Sizeof(xattr)}},
		{"openat2", "openat2", [6]uintptr{atFDCWD, p("probe-file"), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how)}},
		// No ring parameters: unfiltered, it fails without making a ring.
		{"io_uring_setup", "io_uring_setup", [6]uintptr{1, 0}},
		{"keyctl", "keyctl", [6]uintptr{unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffffffffffc) /* @u */, 0}},
		{"add_key", "add_key", [6]uintptr{p("user"), p("studio"), uintptr(unsafe.Pointer(&val[0])), 1, uintptr(0xfffffffffffffffd) /* @s */}},
	}
	for _, t := range tries {
		nr, ok := native.SyscallNames[t.name]
		if !ok {
			fmt.Printf("%s: none\n", t.label)
			continue
		}
		r, _, errno := unix.Syscall6(uintptr(nr), t.args[0], t.args[1], t.args[2], t.args[3], t.args[4], t.args[5])
		if errno != 0 {
			fmt.Printf("%s: %s\n", t.label, unix.ErrnoName(errno))
			continue
		}
		if strings.HasPrefix(t.name, "open") || t.name == "creat" {
			unix.Close(int(r))
		}
		fmt.Printf("%s: ok\n", t.label)
	}
	// What is on disk: every entry of the folder with its permission bits.
	entries, _ := os.ReadDir(".")
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			fmt.Printf("set-id on disk: %s %v\n", e.Name(), fi.Mode())
		}
	}
}

// probeResults runs the probe confined by j in a fresh workspace owned by owner and returns its
// answers.
func probeResults(t *testing.T, j Jail, owner int) (map[string]string, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, owner, owner); err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: exe, Args: []string{syscallProbeArg0}, Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}}
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: t.TempDir(), Reach: []string{exe}})
	if err != nil {
		t.Fatal(err)
	}
	out, runErr := confinedOutput(call, cmd, true)
	if _, err := call.End(context.Background()); err != nil {
		t.Fatalf("end: %v", err)
	}
	if u, ok := j.(*uidJail); ok {
		if err := u.Reclaim(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if runErr != nil {
		t.Fatalf("probe: %v\n%s", runErr, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			got[k] = v
		}
	}
	return got, string(out)
}

// TestSandboxRefusesSetIDBitsAndFileCapabilities: a program in a sandbox's call makes each system
// call the filter refuses; each answers the documented errno, nothing set-uid or set-gid is on
// disk afterwards, and ordinary modes and files still work. The control runs the same program
// in the uid jail, which has no filter: there the refused calls do what they do.
func TestSandboxRefusesSetIDBitsAndFileCapabilities(t *testing.T) {
	want := map[string]string{
		"chmod-0755": "ok", "fchmodat-0700": "ok", "open-create-0644": "ok", "openat-create-0644": "ok", "openat-read-setuid-mode": "ok",
		"chmod-setuid": "EPERM", "chmod-setgid": "EPERM", "fchmod-setuid": "EPERM", "fchmodat-setuid": "EPERM", "fchmodat2-setuid": "EPERM",
		"creat-setuid": "EPERM", "open-create-setuid": "EPERM", "openat-create-setgid": "EPERM", "openat-tmpfile-setuid": "EPERM",
		"mknod-setuid": "EPERM", "mknodat-setgid": "EPERM",
		"setxattr": "ENOTSUP", "lsetxattr": "ENOTSUP", "fsetxattr": "ENOTSUP", "setxattrat": "ENOTSUP",
		"openat2": "ENOSYS", "io_uring_setup": "ENOSYS", "keyctl": "ENOSYS", "add_key": "ENOSYS",
	}
	native, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	sb := newTestSandbox(t, t.TempDir())
	for _, id := range []string{"seccomp", "keyring"} {
		found := false
		for _, l := range sb.Status().Layers {
			found = found || (l.ID == id && l.Active)
		}
		if !found {
			t.Errorf("the sandbox's status has no active %s layer: %+v", id, sb.Status().Layers)
		}
	}
	// The workspace's owner is root, or the runner's account (1001 on GitHub, with sudo).
	for _, owner := range []int{0, 1001} {
		got, out := probeResults(t, sb, owner)
		var labels []string
		for l := range want {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		for _, l := range labels {
			if got[l] == "none" {
				continue // the native ABI has no such call (arm64's chmod, open, creat, mknod)
			}
			if got[l] != want[l] {
				t.Errorf("in the sandbox, in a workspace of uid %d, %s answered %q, want %q", owner, l, got[l], want[l])
			}
		}
		if strings.Contains(out, "set-id on disk") {
			t.Errorf("the sandboxed call left set-id files in a workspace of uid %d:\n%s", owner, out)
		}
	}
	// The control: unconfined by a filter, the same attempts get through (or fail for their own
	// reasons), so the answers above are the filter's.
	control, out := probeResults(t, newJail(t, false), 0)
	for _, l := range []string{"chmod-setuid", "fchmodat-setuid", "openat-create-setgid", "fsetxattr", "keyctl"} {
		if control[l] != "ok" {
			t.Errorf("control: in the uid jail, %s answered %q, want ok\n%s", l, control[l], out)
		}
	}
	if _, ok := native.SyscallNames["chmod"]; ok && control["chmod-setuid"] == "ok" && !strings.Contains(out, "set-id on disk") {
		t.Errorf("control: the uid jail's probe made no set-id file:\n%s", out)
	}
}

// seccompData is struct seccomp_data as the kernel hands it to a filter, for the BPF interpreter,
// which loads each 32-bit word in network order where the kernel loads it in the native one: the
// words are where the kernel has them, each big-endian.
func seccompData(nr int, auditArch uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], uint32(nr))
	binary.BigEndian.PutUint32(b[4:], auditArch)
	littleEndian := binary.NativeEndian.Uint16([]byte{1, 0}) == 1
	for i, a := range args {
		first, second := uint32(a>>32), uint32(a)
		if littleEndian {
			first, second = second, first
		}
		binary.BigEndian.PutUint32(b[16+8*i:], first)
		binary.BigEndian.PutUint32(b[16+8*i+4:], second)
	}
	return b
}

// TestSyscallFilterDecisions runs the assembled filter in a BPF interpreter over the system
// calls it must refuse and must allow, and over other ABIs, which a real process cannot reach
// from Go.
func TestSyscallFilterDecisions(t *testing.T) {
	filter, err := syscallFilter()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]bpf.RawInstruction, len(filter))
	for i, f := range filter {
		raw[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}
	}
	insts, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter does not disassemble")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	native, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	const (
		allow = unix.SECCOMP_RET_ALLOW
		kill  = unix.SECCOMP_RET_KILL_PROCESS
		errno = unix.SECCOMP_RET_ERRNO
	)
	nr := func(name string) int {
		n, ok := native.SyscallNames[name]
		if !ok {
			t.Fatalf("no %s on %s", name, native.Name)
		}
		return n
	}
	cases := []struct {
		name string
		data []byte
		want uint32
	}{
		{"fchmodat 0755", seccompData(nr("fchmodat"), uint32(native.ID), 0, 0, 0o755), allow},
		{"fchmodat 04755", seccompData(nr("fchmodat"), uint32(native.ID), 0, 0, 0o4755), errno | uint32(unix.EPERM)},
		{"fchmodat 02000", seccompData(nr("fchmodat"), uint32(native.ID), 0, 0, 0o2000), errno | uint32(unix.EPERM)},
		{"fchmodat 01777 (sticky)", seccompData(nr("fchmodat"), uint32(native.ID), 0, 0, 0o1777), allow},
		{"openat read, setuid mode", seccompData(nr("openat"), uint32(native.ID), 0, 0, unix.O_RDONLY, 0o4755), allow},
		{"openat create 0644", seccompData(nr("openat"), uint32(native.ID), 0, 0, unix.O_CREAT|unix.O_WRONLY, 0o644), allow},
		{"openat create 04755", seccompData(nr("openat"), uint32(native.ID), 0, 0, unix.O_CREAT|unix.O_WRONLY, 0o4755), errno | uint32(unix.EPERM)},
		{"openat tmpfile 02755", seccompData(nr("openat"), uint32(native.ID), 0, 0, unix.O_TMPFILE|unix.O_RDWR, 0o2755), errno | uint32(unix.EPERM)},
		{"mknodat setuid", seccompData(nr("mknodat"), uint32(native.ID), 0, 0, unix.S_IFREG|0o4755), errno | uint32(unix.EPERM)},
		{"fsetxattr", seccompData(nr("fsetxattr"), uint32(native.ID)), errno | uint32(unix.EOPNOTSUPP)},
		{"fgetxattr", seccompData(nr("fgetxattr"), uint32(native.ID)), allow},
		{"openat2", seccompData(nr("openat2"), uint32(native.ID)), errno | uint32(unix.ENOSYS)},
		{"clone3", seccompData(nr("clone3"), uint32(native.ID)), allow},
		{"unshare newuser", seccompData(nr("unshare"), uint32(native.ID), unix.CLONE_NEWUSER|unix.CLONE_NEWNS), allow},
		{"io_uring_setup", seccompData(nr("io_uring_setup"), uint32(native.ID)), errno | uint32(unix.ENOSYS)},
		{"keyctl", seccompData(nr("keyctl"), uint32(native.ID)), errno | uint32(unix.ENOSYS)},
		{"a mode's high word is not a mode", seccompData(nr("fchmodat"), uint32(native.ID), 0, 0, 0o4755<<32), allow},
		{"write", seccompData(nr("write"), uint32(native.ID)), allow},
		{"another ABI", seccompData(nr("write"), uint32(native.ID)^0x40000000), kill},
	}
	if native.ID == arch.X86_64.ID {
		cases = append(cases,
			struct {
				name string
				data []byte
				want uint32
			}{"x32 chmod", seccompData(arch.X32.SyscallNames["chmod"]|0x40000000, uint32(native.ID), 0, 0o4755), errno | uint32(unix.ENOSYS)},
			struct {
				name string
				data []byte
				want uint32
			}{"i386 chmod", seccompData(arch.I386.SyscallNames["chmod"], uint32(arch.I386.ID), 0, 0o4755), kill})
	}
	for _, c := range cases {
		got, err := vm.Run(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if uint32(got) != c.want {
			t.Errorf("%s: the filter answered %#x, want %#x", c.name, got, c.want)
		}
	}
}

// TestSandboxedProgramsStillWork: the tools agents run, in a sandbox's call with the filter: git
// (init, commit, a clone), node and npm, python3 copying a file with its metadata, cp -a, tar, and
// a user namespace of its own, which Codex's own sandbox (bubblewrap) makes.
func TestSandboxedProgramsStillWork(t *testing.T) {
	ws := t.TempDir()
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(ws, "src", "a.txt"), "a\n", 0o644)
	j := newTestSandbox(t, ws)
	script := `set -e
export HOME=/tmp GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x
git init -q repo && cd repo && cp ../src/a.txt . && git add a.txt && git commit -qm one && git clone -q . ../clone && cd .. && echo git-ok
node -e 'require("fs").writeFileSync("n.txt", "n"); console.log("node-ok")'
npm --version >/dev/null && echo npm-ok
python3 -c 'import shutil, os; shutil.copy2("src/a.txt", "p.txt"); os.chmod("p.txt", 0o755); print("python-ok")'
cp -a src copied && echo cp-ok
tar cf t.tar src && mkdir x && tar xf t.tar -C x && echo tar-ok
chmod 0755 src/a.txt && mkdir -m 0750 d && echo chmod-ok
unshare -Ur true && echo userns-ok
`
	out, ended := sandboxed(t, j, ws, script, "PATH=/usr/local/bin:/usr/bin:/bin")
	for _, want := range []string{"git-ok", "node-ok", "npm-ok", "python-ok", "cp-ok", "tar-ok", "chmod-ok", "userns-ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("in the sandbox, %s did not happen:\n%s", want, out)
		}
	}
	if ended.ExitCode == nil || *ended.ExitCode != 0 {
		t.Errorf("the script ended %+v:\n%s", ended, out)
	}
}

// TestStripSetIDTouchesOnlyTheAgentsFiles: the uid jail's give-back drops the set-id bits of the
// agent's files in the host's temporary places, and nothing else: not another user's set-uid
// file, not what an agent's link points to, not the other bits.
func TestStripSetIDTouchesOnlyTheAgentsFiles(t *testing.T) {
	requireRoot(t)
	agent := identity{uid: 190000 + os.Getpid()%9000, gid: 190000 + os.Getpid()%9000}
	place := t.TempDir()
	mine := filepath.Join(place, "deep", "mine")
	theirs := filepath.Join(place, "theirs")
	outside := filepath.Join(t.TempDir(), "root-setuid")
	for _, f := range []string{mine, theirs, outside} {
		mustWrite(t, f, "x", 0o755)
	}
	if err := os.Lchown(mine, agent.uid, agent.gid); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{mine, theirs, outside} {
		if err := unix.Chmod(f, 0o6755|unix.S_ISVTX); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(place, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, agent.uid, agent.gid); err != nil {
		t.Fatal(err)
	}
	if err := stripSetID(agent, []string{place}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]uint32{mine: 0o1755, theirs: 0o7755, outside: 0o7755} {
		var st unix.Stat_t
		if err := unix.Lstat(f, &st); err != nil {
			t.Fatal(err)
		}
		if got := st.Mode & 0o7777; got != want {
			t.Errorf("%s: mode %o, want %o", f, got, want)
		}
	}
}
