package jail

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel's keyrings are not the call's: a process keeps the session keyring of the process
// that forked it, whatever uid it switches to (and possesses, so reads and writes, what is in
// it), and each uid has a user keyring and a user session keyring (and a persistent one) that
// live as long as the kernel, shared by every process of the uid. A call of the agent uid could
// leave keys there for the next run that leases the uid, or read the studio's session keyring.
//
// So each call gets a session keyring of its own (joinFreshSessionKeyring: in the sandbox's init,
// whose filter then refuses the keyring calls altogether; in the uid jail, in sessionExec, which
// also empties the uid's keyrings before each call), and the uid's keyrings are emptied when its
// lease is taken and when it is given back (clearUIDKeyrings).

// keyringsRefused reports an errno saying the keyring calls are not there for this process at
// all: a kernel without keys (ENOSYS), or a container's seccomp profile (Docker's answers
// EPERM), which holds for the agent's processes too, so there is nothing of theirs to isolate.
func keyringsRefused(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)
}

// joinFreshSessionKeyring gives the calling thread a new anonymous session keyring, which what
// the thread forks afterwards inherits instead of the studio's. It goes when its last process
// ends.
func joinFreshSessionKeyring() error {
	// No name (NULL): anonymous, so no other process can join it by name.
	if _, errno := keyctl(unix.KEYCTL_JOIN_SESSION_KEYRING, 0); errno != 0 {
		return fmt.Errorf("join a session keyring of the call's own: %w", errno)
	}
	return nil
}

// keyringClearArg0 is the studio binary started as the agent's uid to empty that uid's keyrings
// (clearUIDKeyrings). It exits 0 when they are empty, else exitKeyringsKept, saying why.
const (
	keyringClearArg0 = "studio-keyring-clear"
	exitKeyringsKept = 3
)

// clearUIDKeyrings empties uid's user, user session and persistent keyrings. Root cannot reach
// another uid's keyrings (they answer to their owner, or to whoever possesses them), and a
// thread of the studio turned into uid would leave the studio's credentials changed where Go
// parks that thread, so a process of the uid clears them, as their owner would. The error wraps
// errKeyringsKept when the keyrings cannot be cleared; a helper that cannot even start (the
// studio's binary not executable by the uid) says so without it.
func clearUIDKeyrings(uid, gid int) error {
	if keysOwnedBy(uid) == 0 {
		// No key of the uid anywhere, not even its keyrings: nothing to clear, and no process to
		// start (a sandboxed agent cannot make keys, so this is every lease of a sandbox's uid).
		return nil
	}
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{keyringClearArg0}, Dir: "/", Env: []string{}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == exitKeyringsKept:
		return fmt.Errorf("%w: uid %d: %s", errKeyringsKept, uid, strings.TrimSpace(string(out)))
	default:
		return fmt.Errorf("clear the keyrings of uid %d: %v: %s", uid, err, strings.TrimSpace(string(out)))
	}
}

// uidKeyringsOnly is how many keys a uid owns when nothing but its own keyrings is left: the
// user, user session and persistent keyrings.
const uidKeyringsOnly = 3

// waitForKeysGone waits, at most limit, until uid owns no more keys than its own keyrings, and
// says whether it does. A key unlinked by a clear, or held by the session keyring of a call that
// ended, lives on until an RCU grace period and the kernel's key collector have passed (tens of
// milliseconds), and until then a process of the uid may still read it by its serial. The count
// is the kernel's (/proc/key-users), whatever the keys' permissions.
func waitForKeysGone(uid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if keysOwnedBy(uid) <= uidKeyringsOnly {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// keysOwnedBy reads uid's key count from /proc/key-users ("uid: usage nkeys/nikeys ..."); a uid
// with none has no line. An unreadable file counts as none: a kernel without keys.
func keysOwnedBy(uid int) int {
	data, err := os.ReadFile("/proc/key-users")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == strconv.Itoa(uid)+":" {
			n, _ := strconv.Atoi(strings.SplitN(f[2], "/", 2)[0])
			return n
		}
	}
	return 0
}

// errKeyringsKept means a uid's keyrings could not be emptied: a lease refuses the uid.
var errKeyringsKept = errors.New("the uid's kernel keyrings cannot be cleared")

// clearOwnKeyrings empties the caller's user, user session and persistent keyrings.
func clearOwnKeyrings() error {
	var errs []error
	for _, ring := range []struct {
		name string
		id   int
	}{{"user", unix.KEY_SPEC_USER_KEYRING}, {"user session", unix.KEY_SPEC_USER_SESSION_KEYRING}} {
		if _, errno := keyctl(unix.KEYCTL_CLEAR, ring.id); keyringsRefused(errno) {
			return nil
		} else if errno != 0 {
			errs = append(errs, fmt.Errorf("the %s keyring: %w", ring.name, errno))
		}
	}
	// The persistent keyring is only reached by linking it somewhere: into the thread's own
	// keyring, which goes with the process. A kernel without persistent keyrings has none.
	const ownUID = -1
	id, errno := keyctl(unix.KEYCTL_GET_PERSISTENT, ownUID, unix.KEY_SPEC_THREAD_KEYRING)
	switch {
	case errno == 0:
		if _, errno := keyctl(unix.KEYCTL_CLEAR, id); errno != 0 {
			errs = append(errs, fmt.Errorf("the persistent keyring: %w", errno))
		}
	case errno != unix.EOPNOTSUPP && errno != unix.ENOSYS:
		errs = append(errs, fmt.Errorf("the persistent keyring: %w", errno))
	}
	return errors.Join(errs...)
}

// keyringClear is the process keyringClearArg0 names. Any failure means keys may be kept: a
// keyring the owner took every right from answers EACCES, or ENOKEY (the kernel no longer finds
// the uid's own), while the keys in it live on, readable by serial.
func keyringClear() int {
	if err := clearOwnKeyrings(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return exitKeyringsKept
	}
	return 0
}

// keyctl is the raw system call (x/sys has no KEYCTL_CLEAR, nor a join without a name), its
// arguments ints as the kernel's special keyring ids are negative.
func keyctl(cmd int, args ...int) (int, unix.Errno) {
	var a [4]uintptr
	for i, v := range args {
		a[i] = uintptr(v)
	}
	r, _, errno := unix.RawSyscall6(unix.SYS_KEYCTL, uintptr(cmd), a[0], a[1], a[2], a[3], 0)
	return int(r), errno
}

// sessionArg0 is the studio binary started as the uid jail's first step of a call: as the agent,
// it joins a fresh session keyring and then executes the call's program in its place (the uid
// jail has no init of its own to do it, and Go gives no hook between fork and exec). Its
// arguments: the descriptor of a pipe where it says why the program could not be executed, the
// program's path, and its argv.
const sessionArg0 = "studio-call-session"

func init() {
	switch {
	case len(os.Args) >= 4 && os.Args[0] == sessionArg0:
		// The session keyring is the thread's: it must be the one that executes the program.
		runtime.LockOSThread()
		syscall.Exit(sessionExec(os.Args[1], os.Args[2], os.Args[3:]))
	case len(os.Args) == 1 && os.Args[0] == keyringClearArg0:
		syscall.Exit(keyringClear())
	}
}

func sessionExec(fdArg, path string, argv []string) int {
	fd, err := strconv.Atoi(fdArg)
	if err != nil {
		return 127
	}
	syscall.CloseOnExec(fd) // the program never gets it: its end means the exec happened
	report := os.NewFile(uintptr(fd), "report")
	if err := joinFreshSessionKeyring(); err != nil && !keyringsRefused(err) {
		fmt.Fprint(report, err.Error())
		return 127
	}
	// What the uid's last call kept in its own keyrings is not this call's. An agent that took
	// away its own right to clear them keeps them for the rest of its run, whose uid it is; the
	// next lease refuses the uid.
	_ = clearOwnKeyrings()
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprint(report, (&os.PathError{Op: "fork/exec", Path: path, Err: err}).Error())
	return 127
}

// freshSession is a call started through sessionExec: the pipe of its report.
type freshSession struct {
	r, w *os.File
}

// wrapFreshSession turns cmd into the start of sessionExec (the write end of the report pipe is
// the last of cmd's files).
func wrapFreshSession(cmd *exec.Cmd) (*freshSession, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	fd := 2 + len(cmd.ExtraFiles)
	cmd.Args = append([]string{sessionArg0, strconv.Itoa(fd), cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	return &freshSession{r: r, w: w}, nil
}

// failure is why the program could not be executed ("" when it was, or never started), once the
// call's processes have ended.
func (s *freshSession) failure() string {
	if s == nil {
		return ""
	}
	s.w.Close()
	data, _ := io.ReadAll(io.LimitReader(s.r, 4096))
	s.r.Close()
	return string(data)
}

// probeFreshSession runs /bin/true through sessionExec as id, as a call would: "" when it works,
// else why not (the studio's binary not executable by the agent, say).
func probeFreshSession(id identity) string {
	bin := "/bin/true"
	if _, err := os.Stat(bin); err != nil {
		bin = "/usr/bin/true"
	}
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(id.uid), Gid: uint32(id.gid), Groups: []uint32{}}}
	s, err := wrapFreshSession(cmd)
	if err != nil {
		return err.Error()
	}
	runErr := cmd.Run()
	if why := s.failure(); why != "" {
		return why
	}
	if runErr != nil {
		return runErr.Error()
	}
	return ""
}
