package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The sandbox's processes are the studio binary itself, started again under these names (argv[0])
// through /proc/self/exe: the init of a call's namespaces, the holder of a user namespace for an
// idmapped mount, and the probe Setup runs. Any binary that links this package can be them, so the
// test binaries of every package using the jail are as well.
const (
	helperArg0 = "studio-sandbox-init"
	holderArg0 = "studio-userns-holder"
	probeArg0  = "studio-sandbox-probe"
)

// The sandbox init's descriptors.
const (
	fdSpec     = 3 // the helperSpec as JSON (a memory file)
	fdUserns   = 4 // the user namespace of the workspace's idmapped mount
	fdLifeline = 5 // read end of a pipe the studio holds open: EOF means the studio is gone
	fdReport   = 6 // where the init writes its helperReport
)

func init() {
	if len(os.Args) == 0 {
		return
	}
	// These processes end with a bare exit_group: they have nothing to flush, and a race-enabled
	// build (the tests) would otherwise sleep a second in os.Exit for reports.
	switch os.Args[0] {
	case helperArg0:
		// prctl(PR_SET_NO_NEW_PRIVS) is per thread, and the agent is forked from this one.
		runtime.LockOSThread()
		syscall.Exit(sandboxInit())
	case holderArg0:
		_, _ = io.Copy(io.Discard, os.Stdin)
		syscall.Exit(0)
	case probeArg0:
		syscall.Exit(0)
	}
}

// helperSpec is what the studio tells the init of one call.
type helperSpec struct {
	Path   string    `json:"path"`
	Args   []string  `json:"args"`
	Env    []string  `json:"env"`
	Dir    string    `json:"dir"`
	UID    int       `json:"uid"`
	GID    int       `json:"gid"`
	Mounts []mountOp `json:"mounts"`
	// GitMode is the permission bits of the workspace's .git, for the top of its throwaway layer.
	GitMode  uint32 `json:"gitMode"`
	NProc    uint64 `json:"nproc"`
	Hostname string `json:"hostname"`
	// Cgroups are the cgroup.procs files of the call's cgroup (one per hierarchy), which the
	// init enters before anything else; TmpfsSize bounds each tmpfs of the call (bytes, 0: none).
	Cgroups   []string `json:"cgroups,omitempty"`
	TmpfsSize int64    `json:"tmpfsSize,omitempty"`
	// Egress, when set, means the call has a network namespace of its own (fdEgress).
	Egress *egressSpec `json:"egress,omitempty"`
}

// helperReport is what the init tells the studio once the call ended (or could not start).
type helperReport struct {
	Stage     string `json:"stage,omitempty"` // "setup" or "exec" when Error is set
	Error     string `json:"error,omitempty"`
	Exit      *int   `json:"exit,omitempty"`
	Signal    string `json:"signal,omitempty"`
	Leftovers int    `json:"leftovers"`
	// GitOverlay says the workspace's .git got a throwaway layer (else it was read-only).
	GitOverlay bool `json:"gitOverlay"`
	Devpts     bool `json:"devpts"`
}

// sandboxInit is the first process of a call's PID namespace, started by the studio with the
// namespaces already made (CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC|CLONE_NEWUTS). As root in them it
// builds the call's root, switches into it, and starts the agent's program as the agent's uid with
// no_new_privs. It stays as the namespace's init: it reaps orphans, and once the program has
// ended it counts and kills what is left, reports, and exits, after which the kernel guarantees
// nothing of the namespace is alive. It also exits, killing everything, when the studio dies.
func sandboxInit() int {
	rep := os.NewFile(fdReport, "report")
	var report helperReport
	send := func() {
		_ = json.NewEncoder(rep).Encode(report)
		_ = rep.Close()
	}
	fail := func(stage string, err error) int {
		report.Stage, report.Error = stage, err.Error()
		send()
		return 125
	}
	for fd := fdSpec; fd <= fdEgress; fd++ {
		syscall.CloseOnExec(fd)
	}
	data, err := io.ReadAll(io.LimitReader(os.NewFile(fdSpec, "spec"), 4<<20))
	if err != nil {
		return fail("setup", fmt.Errorf("read the call's spec: %w", err))
	}
	var spec helperSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fail("setup", fmt.Errorf("read the call's spec: %w", err))
	}
	// The studio's SIGTERM goes to the whole process group, the program included; the init
	// handles it (an init ignores signals it has no handler for, but Go's default would exit) and
	// keeps waiting, so the program gets its grace period.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		// Nothing is ever written: the read returns when the studio's end is closed, which the
		// kernel does when the studio dies, however it dies.
		var b [1]byte
		_, _ = os.NewFile(fdLifeline, "lifeline").Read(b[:])
		killAll()
		syscall.Exit(137)
	}()
	// Into the call's cgroup while the host's /sys is still here: the tmpfs pages of the root
	// built next are charged to the call, as is everything it starts.
	if err := enterCgroup(spec.Cgroups); err != nil {
		return fail("setup", err)
	}
	if err := buildRoot(&spec, &report); err != nil {
		return fail("setup", err)
	}
	if spec.Hostname != "" {
		_ = unix.Sethostname([]byte(spec.Hostname))
	}
	if spec.Egress != nil {
		if err := startNetwork(spec.Egress); err != nil {
			return fail("setup", err)
		}
	}
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	if spec.NProc > 0 {
		_ = unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: spec.NProc, Max: spec.NProc})
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("setup", fmt.Errorf("set no_new_privs: %w", err))
	}
	if err := restrictAgent(); err != nil {
		return fail("setup", err)
	}
	pid, err := syscall.ForkExec(spec.Path, spec.Args, &syscall.ProcAttr{
		Dir: spec.Dir, Env: spec.Env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(spec.UID), Gid: uint32(spec.GID), Groups: []uint32{}}},
	})
	if err != nil {
		return fail("exec", &os.PathError{Op: "fork/exec", Path: spec.Path, Err: err})
	}
	ws := reap(pid)
	report.Leftovers = len(others())
	killAll()
	code := 0
	switch {
	case ws.Signaled():
		report.Signal = unix.SignalName(ws.Signal())
		code = 128 + int(ws.Signal())
	default:
		code = ws.ExitStatus()
		report.Exit = &code
	}
	send()
	return code
}

// reap waits for pid, reaping every orphan the namespace hands to its init meanwhile.
func reap(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || got == pid {
			return ws
		}
	}
}

// others lists the live processes of the namespace besides its init, from its own /proc.
func others() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// killAll SIGKILLs every process of the namespace but the init and reaps them, again while a
// process forked during the last round is left (bounded).
func killAll() {
	deadline := time.Now().Add(5 * time.Second)
	for {
		_ = syscall.Kill(-1, syscall.SIGKILL)
		for {
			var ws syscall.WaitStatus
			_, err := syscall.Wait4(-1, &ws, 0, nil)
			if err != nil && !errors.Is(err, syscall.EINTR) {
				break // ECHILD: every child is reaped
			}
		}
		if len(others()) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// stageDir is where the init assembles the call's root before switching into it: a tmpfs of its
// own over the host's /tmp, in the call's mount namespace only.
const stageDir = "/tmp"

// buildRoot assembles the call's root and switches into it (pivot_root, the old root detached).
func buildRoot(spec *helperSpec, rep *helperReport) error {
	// Nothing mounted here may reach the host's mounts (systemd makes / shared).
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	tree, err := unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("clone the host's mounts (open_tree): %w", err)
	}
	defer unix.Close(tree)
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}); err != nil {
		return fmt.Errorf("make the host read-only (mount_setattr): %w", err)
	}
	if err := unix.Mount("tmpfs", stageDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, stageOptions(spec)); err != nil {
		return fmt.Errorf("stage the root: %w", err)
	}
	root := filepath.Join(stageDir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return fmt.Errorf("stage the root: %w", err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, root, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attach the read-only host (move_mount): %w", err)
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the new root: %w", err)
	}
	defer unix.Close(rootFD)
	// The host's places the plan binds are taken from the read-only copy now, before private and
	// hidden places are laid over their parents (the scratch folder lives in the host's /tmp).
	sources := map[string]int{}
	defer func() {
		for _, fd := range sources {
			unix.Close(fd)
		}
	}()
	for _, op := range spec.Mounts {
		switch op.Kind {
		case mWorkspace, mScratch, mReach, mReadOnlyFile, mFile:
			from := op.Target
			if op.Source != "" {
				from = op.Source
			}
			fd, err := at(rootFD, from, false, op.Kind != mReadOnlyFile && op.Kind != mFile)
			if err != nil {
				if op.Kind == mReach {
					continue
				}
				return fmt.Errorf("%s %s: %w", op.Kind, op.Target, err)
			}
			sources[op.Target] = fd
		}
	}
	var hides []string
	for _, op := range spec.Mounts {
		err := apply(rootFD, op, sources[op.Target], spec, rep)
		switch {
		case err == nil:
		case op.Kind == mReach:
			// A tool directory that cannot be bound is missing inside; the command then fails
			// to find it, which says more than a sandbox refusing to start.
			continue
		case op.Kind == mDevpts:
			continue
		default:
			return fmt.Errorf("%s %s: %w", op.Kind, op.Target, err)
		}
		if op.Kind == mHide {
			hides = append(hides, op.Target)
		}
	}
	// The hidden places were writable while mount points were made in them; no longer.
	for _, h := range hides {
		fd, err := at(rootFD, h, false, true)
		if err == nil {
			err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
			unix.Close(fd)
		}
		if err != nil {
			return fmt.Errorf("make %s read-only: %w", h, err)
		}
	}
	if err := unix.Fchdir(rootFD); err != nil {
		return fmt.Errorf("enter the new root: %w", err)
	}
	// pivot_root(".", ".") stacks the old root on the new one; detaching it leaves the new root.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the old root: %w", err)
	}
	return unix.Chdir("/")
}

// apply carries out one mount of the plan inside the new root; src is the host place a bind
// takes, opened in the read-only copy of the host.
func apply(rootFD int, op mountOp, src int, spec *helperSpec, rep *helperReport) error {
	const rw = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	ro := binding{set: rw | unix.MOUNT_ATTR_RDONLY, userns: -1}
	switch op.Kind {
	case mPrivate:
		opts := map[string]string{"mode": "1777"}
		if size := tmpfsSize(spec); size != "" {
			opts["size"] = size
		}
		return newFS(rootFD, op.Target, "tmpfs", opts, rw)
	case mHide:
		return newFS(rootFD, op.Target, "tmpfs", map[string]string{"mode": "0755"}, rw)
	case mProc:
		return newFS(rootFD, op.Target, "proc", nil, rw|unix.MOUNT_ATTR_NOEXEC)
	case mDevpts:
		if err := newFS(rootFD, op.Target, "devpts", map[string]string{"ptmxmode": "0666", "mode": "0620"}, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC); err != nil {
			return err
		}
		ptmx, err := at(rootFD, filepath.Join(op.Target, "ptmx"), false, false)
		if err != nil {
			return err
		}
		defer unix.Close(ptmx)
		if err := bind(rootFD, ptmx, "/dev/ptmx", false, binding{set: rw, userns: -1}); err != nil {
			return err
		}
		rep.Devpts = true
		return nil
	case mWorkspace:
		// Writable again (the copy of the host is read-only) and idmapped.
		return bind(rootFD, src, op.Target, true, binding{set: rw | unix.MOUNT_ATTR_IDMAP, clear: unix.MOUNT_ATTR_RDONLY, userns: fdUserns})
	case mScratch:
		return bind(rootFD, src, op.Target, true, binding{set: rw, clear: unix.MOUNT_ATTR_RDONLY, userns: -1})
	case mReach:
		ro.recursive = true
		return bind(rootFD, src, op.Target, true, ro)
	case mReadOnlyFile, mFile:
		return bind(rootFD, src, op.Target, false, ro)
	case mNestedGit:
		// From inside the root: the workspace's idmapped view, idmap and all.
		view, err := at(rootFD, op.Target, false, false)
		if err != nil {
			return err
		}
		defer unix.Close(view)
		return bind(rootFD, view, op.Target, false, ro)
	case mGitDir:
		if err := gitOverlay(rootFD, op.Target, spec); err == nil {
			rep.GitOverlay = true
			return nil
		}
		// No overlayfs (or not over this filesystem): the agent's git reads, never writes.
		lower, err := at(rootFD, op.Target, false, true)
		if err != nil {
			return err
		}
		defer unix.Close(lower)
		return bind(rootFD, lower, op.Target, true, ro)
	}
	return fmt.Errorf("unknown mount kind %q", op.Kind)
}

// tmpfsSize is the size option of the call's tmpfs mounts, "" when unbounded: a full tmpfs
// answers ENOSPC rather than leave the host (or the call's cgroup) out of memory.
func tmpfsSize(spec *helperSpec) string {
	if spec.TmpfsSize <= 0 {
		return ""
	}
	return strconv.FormatInt(spec.TmpfsSize, 10)
}

// stageOptions are the mount options of the tmpfs the root is staged in.
func stageOptions(spec *helperSpec) string {
	if size := tmpfsSize(spec); size != "" {
		return "mode=0700,size=" + size
	}
	return "mode=0700"
}

// binding is how a bind mount is made: attributes set and cleared, the user namespace of an
// idmapped one (-1: none), whether the mounts below come along.
type binding struct {
	set, clear uint64
	userns     int
	recursive  bool
}

// newFS mounts a new filesystem of type fstype at target inside the root.
func newFS(rootFD int, target, fstype string, opts map[string]string, attrs int) error {
	fs, err := unix.Fsopen(fstype, unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen %s: %w", fstype, err)
	}
	defer unix.Close(fs)
	for k, v := range opts {
		if err := unix.FsconfigSetString(fs, k, v); err != nil {
			return fmt.Errorf("%s option %s=%s: %w", fstype, k, v, err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return fmt.Errorf("create %s: %w", fstype, err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, attrs)
	if err != nil {
		return fmt.Errorf("fsmount %s: %w", fstype, err)
	}
	defer unix.Close(mnt)
	return attach(rootFD, mnt, target, true, false)
}

// bind clones the mount at src and attaches the clone at target inside the root.
func bind(rootFD, src int, target string, dir bool, b binding) error {
	flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_EMPTY_PATH)
	setFlags := uint(unix.AT_EMPTY_PATH)
	if b.recursive {
		flags |= unix.AT_RECURSIVE
		setFlags |= unix.AT_RECURSIVE
	}
	tree, err := unix.OpenTree(src, "", flags)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	attr := &unix.MountAttr{Attr_set: b.set, Attr_clr: b.clear}
	if b.userns >= 0 {
		attr.Userns_fd = uint64(b.userns)
	}
	if err := unix.MountSetattr(tree, "", setFlags, attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	return attach(rootFD, tree, target, dir, true)
}

// attach moves the detached mount mnt onto target inside the root, making the mount point first
// where it is missing and create allows (only ever inside a tmpfs of the call's own: the host is
// read-only).
func attach(rootFD, mnt int, target string, dir, create bool) error {
	fd, err := at(rootFD, target, create, dir)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.MoveMount(mnt, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// at opens path inside the root as a path descriptor, following no link (the workspace is the
// agent's: a .git it turned into a link must not steer a mount), making missing directories (and
// the last component, a file when !dir) when create is set.
func at(rootFD int, path string, create, dir bool) (int, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	rel := strings.TrimPrefix(filepath.Clean(path), "/")
	if rel == "" {
		rel = "."
	}
	fd, err := unix.Openat2(rootFD, rel, how)
	if err == nil || !create || !errors.Is(err, unix.ENOENT) {
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", path, err)
		}
		return fd, nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		if fd, err := unix.Openat2(rootFD, sub, how); err == nil {
			unix.Close(fd)
			continue
		}
		parent, err := unix.Openat2(rootFD, strings.Join(append([]string{"."}, parts[:i]...), "/"), &unix.OpenHow{Flags: unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: how.Resolve})
		if err != nil {
			return -1, fmt.Errorf("open the parent of %s: %w", sub, err)
		}
		if i == len(parts)-1 && !dir {
			var f int
			f, err = unix.Openat(parent, parts[i], unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
			if err == nil {
				unix.Close(f)
			}
		} else {
			err = unix.Mkdirat(parent, parts[i], 0o755)
		}
		unix.Close(parent)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("make the mount point %s: %w", sub, err)
		}
	}
	fd, err = unix.Openat2(rootFD, rel, how)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", path, err)
	}
	return fd, nil
}

// gitOverlay lays a throwaway writable layer over the workspace's .git: reads come from the real
// one (through the idmapped workspace, so its files are the agent's), writes go to a tmpfs of the
// call's own, gone when the call ends. The layer's top takes the agent as owner and .git's mode.
func gitOverlay(rootFD int, target string, spec *helperSpec) error {
	lower, err := at(rootFD, target, false, true)
	if err != nil {
		return err
	}
	defer unix.Close(lower)
	up, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(up)
	if err := unix.FsconfigSetString(up, "mode", "0700"); err != nil {
		return err
	}
	if size := tmpfsSize(spec); size != "" {
		if err := unix.FsconfigSetString(up, "size", size); err != nil {
			return err
		}
	}
	if err := unix.FsconfigCreate(up); err != nil {
		return err
	}
	upper, err := unix.Fsmount(up, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return err
	}
	defer unix.Close(upper)
	for _, d := range []string{"upper", "work"} {
		if err := unix.Mkdirat(upper, d, 0o700); err != nil {
			return err
		}
	}
	mode := spec.GitMode & 0o7777
	if mode == 0 {
		mode = 0o755
	}
	if err := unix.Fchmodat(upper, "upper", mode, 0); err != nil {
		return err
	}
	if err := unix.Fchownat(upper, "upper", spec.UID, spec.GID, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	ov, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(ov)
	self := "/proc/self/fd/"
	for k, v := range map[string]string{
		"lowerdir": self + strconv.Itoa(lower),
		"upperdir": self + strconv.Itoa(upper) + "/upper",
		"workdir":  self + strconv.Itoa(upper) + "/work",
	} {
		if err := unix.FsconfigSetString(ov, k, v); err != nil {
			return fmt.Errorf("overlay %s: %w", k, err)
		}
	}
	if err := unix.FsconfigCreate(ov); err != nil {
		return fmt.Errorf("create the overlay: %w", err)
	}
	mnt, err := unix.Fsmount(ov, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return err
	}
	defer unix.Close(mnt)
	return attach(rootFD, mnt, target, true, false)
}
