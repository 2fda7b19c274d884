package jail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultNProc bounds the processes (threads included) of a leased agent uid: a fork bomb stops
// there, and a build with many jobs still fits.
const DefaultNProc = 16384

// defaultHidden are the host's private places no call sees, whatever the runner: every home, and
// the places where orchestrators mount credentials.
var defaultHidden = []string{"/home", "/root", "/run/user", "/run/secrets", "/var/run/secrets"}

// privatePlaces get a fresh tmpfs per call.
var privatePlaces = []string{"/tmp", "/var/tmp", "/dev/shm"}

// sandbox runs each call in namespaces of its own (see sandboxInit).
type sandbox struct {
	id      identity
	hide    []string // resolved, existing
	never   []string // places never bound whole: the hidden ones and every home
	private []string
	notes   []string
	// etc holds the passwd and group files that name the agent (see accounts).
	etc   string
	files map[string]string

	mu     sync.Mutex
	userns map[owner]*os.File // per owner of a workspace: the idmapped mount's user namespace
	live   int
	nested nestedGitWatch // the workspaces' own nested .git entries (nestedgit.go)

	// From the probe.
	gitOverlay, devpts bool

	limits callLimits
}

// newSandbox probes the sandbox on the workspace's filesystem and returns it, or nil and why not.
func newSandbox(ctx context.Context, id identity, opts Options, create bool) (*sandbox, string) {
	s := &sandbox{id: id, userns: map[owner]*os.File{}, limits: newCallLimits(opts, create)}
	s.hide, s.never = privateHostPlaces(opts.Hide)
	for _, p := range privatePlaces {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			s.private = append(s.private, p)
		}
	}
	if len(s.private) == 0 || s.private[0] != "/tmp" {
		return nil, "the host has no /tmp directory to stage the sandbox's root in"
	}
	if err := s.accounts(); err != nil {
		return nil, err.Error()
	}
	if err := s.probe(ctx, opts.Workspace); err != nil {
		s.inspected()
		return nil, err.Error()
	}
	return s, ""
}

// privateHostPlaces are the places no call sees (hide: every home's root, the runner's folders,
// extra), resolved and existing, and those never bound whole (never: hide and every home).
func privateHostPlaces(extra []string) (hide, never []string) {
	for _, h := range append(append([]string{}, defaultHidden...), extra...) {
		if r := realPath(h); r != "" {
			hide = append(hide, r)
		}
	}
	never = append(never, hide...)
	for _, base := range []string{"/home"} {
		entries, _ := os.ReadDir(base)
		for _, e := range entries {
			never = append(never, filepath.Join(base, e.Name()))
		}
	}
	return hide, never
}

// accounts writes the host's passwd and group files with an entry for the agent's uid where it
// has none, bound over the host's inside the sandbox: programs that look their user up (node's
// os.userInfo, git's ident, crontab) find one, as they would for an account.
func (s *sandbox) accounts() error {
	dir, err := os.MkdirTemp("", "studio-sandbox-etc-")
	if err != nil {
		return fmt.Errorf("write the sandbox's passwd: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	s.etc, s.files = dir, map[string]string{}
	uid, gid := strconv.Itoa(s.id.uid), strconv.Itoa(s.id.gid)
	for _, f := range []struct{ host, id, entry string }{
		{"/etc/passwd", uid, "studio-agent-" + uid + ":x:" + uid + ":" + gid + ":Codex Studio agent:/tmp:/bin/sh\n"},
		{"/etc/group", gid, "studio-agent-" + gid + ":x:" + gid + ":\n"},
	} {
		fi, err := os.Lstat(f.host)
		if err != nil || !fi.Mode().IsRegular() {
			continue // no such file, or a link (NixOS): leave the host's as it is
		}
		data, err := os.ReadFile(f.host)
		if err != nil {
			continue
		}
		if hasID(data, 2, f.id) {
			continue // a named account: the host's file names it already
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(data, '\n')
		}
		out := filepath.Join(dir, filepath.Base(f.host))
		if err := os.WriteFile(out, append(data, f.entry...), 0o644); err != nil {
			return fmt.Errorf("write the sandbox's %s: %w", filepath.Base(f.host), err)
		}
		s.files[f.host] = out
	}
	return nil
}

// hasID reports whether a colon-separated file has a line whose field (0-based) is id.
func hasID(data []byte, field int, id string) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) > field && f[field] == id {
			return true
		}
	}
	return false
}

// probe runs one empty call as a real call would run: on the workspace's filesystem, with every
// mount, so that a host that cannot give a sandbox says so before any agent runs.
func (s *sandbox) probe(ctx context.Context, workspace string) error {
	scratch, err := os.MkdirTemp("", "studio-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if workspace == "" {
		// A workspace of its own, with a .git directory for the throwaway layer to be tried on.
		workspace = filepath.Join(scratch, "ws")
		if err := os.MkdirAll(filepath.Join(workspace, ".git"), 0o755); err != nil {
			return err
		}
		scratch = filepath.Join(scratch, "call")
		if err := os.Mkdir(scratch, 0o700); err != nil {
			return err
		}
	}
	// The program is the smallest that proves a program runs as the agent: /bin/true where there
	// is one, else the studio binary itself (a process start costs about as much as the rest).
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{probeArg0}, Dir: workspace, Env: []string{}}
	for _, t := range []string{"/bin/true", "/usr/bin/true"} {
		if fi, err := os.Stat(t); err == nil && fi.Mode().IsRegular() {
			cmd.Path, cmd.Args = t, []string{t}
			break
		}
	}
	call, err := s.Command(ctx, cmd, Spec{Workdir: workspace, Scratch: scratch})
	if err != nil {
		return err
	}
	runErr := cmd.Run()
	sc := call.(*sandboxCall)
	ended, err := call.End(ctx)
	if err != nil {
		return err
	}
	if runErr != nil || ended.ExitCode == nil || *ended.ExitCode != 0 {
		return fmt.Errorf("the probe's sandbox did not run (%v)", runErr)
	}
	s.gitOverlay, s.devpts = sc.report.GitOverlay || sc.gitKind != "dir", sc.report.Devpts
	return nil
}

func (s *sandbox) Status() Status {
	gitLayer := Layer{ID: "git-dir", Name: LayerGitDir, Active: s.gitOverlay}
	if !s.gitOverlay {
		gitLayer.Note = "no overlayfs here: .git is read-only to the agent instead"
	}
	return Status{
		Mode: ModeSandbox, Confined: true, User: s.id.user, UID: s.id.uid, GID: s.id.gid, Leased: s.id.allocated,
		PIDNamespace: true, Notes: s.notes, Layers: []Layer{
			{ID: "uid", Name: LayerUID, Active: true, Note: uidNote(s.id)},
			{ID: "mount-namespace", Name: LayerMountNS, Active: true},
			{ID: "pid-namespace", Name: LayerPIDNS, Active: true},
			{ID: "ipc-uts-namespaces", Name: LayerIPCUTS, Active: true},
			{ID: "idmapped-workspace", Name: LayerIdmap, Active: true},
			gitLayer,
			{ID: "no-new-privs", Name: LayerNoNewPriv, Active: true},
			{ID: "resource-limits", Name: LayerRlimits, Active: true, Note: rlimitsNote(s.id, s.limits.cg != nil)},
			s.limits.layer(),
			{ID: "lifeline", Name: LayerLifeline, Active: true},
			{ID: "seccomp", Name: LayerSeccomp, Active: true, Note: "set-uid/set-gid modes and setxattr refused (nothing the agent makes is honoured as privileged after the call); io_uring, openat2 and the keyring calls answer ENOSYS; other ABIs killed"},
			{ID: "keyring", Name: LayerKeyring, Active: true, Note: "a fresh session keyring per call, which the agent cannot use; a leased uid's own keyrings emptied when it is leased and given back"},
			{ID: "network", Name: LayerNetwork, Active: true, Note: "each call's only way out is the studio's egress proxy: the model and the hosts on the allow-list (network: allow-list, the default)"},
		},
	}
}

// rlimitsNote says what the rlimits bound: a per-uid process limit only fits a uid the run holds
// alone (a named account's other processes would count); the call's cgroup bounds processes for
// every uid.
func rlimitsNote(id identity, cgroup bool) string {
	switch {
	case id.lease != nil:
		return fmt.Sprintf("no core dumps; at most %d processes for the leased uid", DefaultNProc)
	case cgroup:
		return "no core dumps; no per-uid process limit (the agent-user may be shared): the call's cgroup bounds processes"
	}
	return "no core dumps; no process limit at all: the agent-user may be shared, and there is no cgroup"
}

// realPath is p made absolute with its links resolved, or "" when it does not exist.
func realPath(p string) string {
	if p == "" {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return ""
	}
	return r
}

// Command turns cmd into the start of a sandbox: the studio binary as the init of new mount,
// PID, IPC and UTS namespaces (sandboxInit), told by a memory file what to mount and run.
func (s *sandbox) Command(ctx context.Context, cmd *exec.Cmd, spec Spec) (Call, error) {
	workdir, scratch := realPath(spec.Workdir), realPath(spec.Scratch)
	if spec.Workdir != "" && workdir == "" {
		return nil, fmt.Errorf("sandbox: the workspace %s does not exist", spec.Workdir)
	}
	if spec.Scratch != "" && scratch == "" {
		return nil, fmt.Errorf("sandbox: the scratch folder %s does not exist", spec.Scratch)
	}
	call := &sandboxCall{s: s, workdir: workdir}
	var usernsFile *os.File
	if workdir != "" {
		fi, err := os.Lstat(workdir)
		if err != nil {
			return nil, err
		}
		if usernsFile, err = s.usernsFor(ownerOf(fi)); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		call.gitKind, call.gitMode, call.gitLink = gitKindOf(workdir)
		if call.nested, err = s.nested.begin(workdir, false); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if scratch != "" {
		// The caller's own small folder: the call writes there, as the agent.
		if err := chownTree(scratch, s.id.uid, s.id.gid); err != nil {
			return nil, fmt.Errorf("sandbox: give the scratch folder to the agent: %w", err)
		}
	}
	reach := s.reachOf(spec.Reach, cmd.Env)
	bound := append([]string{}, reach...)
	for _, own := range []string{workdir, scratch} {
		if own != "" { // "" would hold every path (under)
			bound = append(bound, own)
		}
	}
	env := confineEnv(cmd.Env, s.never, bound, realPath)
	ops := planMounts(planInput{Workdir: workdir, GitDir: call.gitKind, NestedGit: call.nested.readOnly(), Scratch: scratch, Reach: reach, Hide: s.hide, Private: s.private, Files: s.files})
	dir := cmd.Dir
	if dir == "" {
		dir = workdir
	}
	nproc := uint64(0)
	if s.id.lease != nil {
		nproc = DefaultNProc
	}
	hs := helperSpec{
		Path: cmd.Path, Args: cmd.Args, Env: setEnv(env, "TMPDIR", "/tmp"), Dir: dir,
		UID: s.id.uid, GID: s.id.gid, Mounts: ops, GitMode: uint32(call.gitMode.Perm()), NProc: nproc, Hostname: "studio-sandbox",
	}
	var err error
	if call.cgroup, err = s.limits.create(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	hs.Cgroups, hs.TmpfsSize = call.cgroup.procsFiles(), s.limits.memory
	started := false
	defer func() {
		if !started && call.cgroup != nil {
			_ = call.cgroup.remove()
		}
	}()
	var egressFile *os.File
	if spec.Network != nil {
		if egressFile, err = openEgress(spec.Network.Socket); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		hs.Egress = &egressSpec{Forward: spec.Network.Forward}
	}
	specFile, err := memFile("studio-sandbox-spec", hs)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if usernsFile == nil {
		usernsFile = specFile // no workspace: the init never reads it
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		specFile.Close()
		return nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		specFile.Close()
		lifeR.Close()
		lifeW.Close()
		return nil, err
	}
	call.files = []*os.File{specFile, lifeR, repW}
	call.lifeline, call.reportR, call.reportW = lifeW, repR, repW
	cmd.Path, cmd.Args, cmd.Env, cmd.Dir = "/proc/self/exe", []string{helperArg0}, []string{}, "/"
	cmd.ExtraFiles = []*os.File{specFile, usernsFile, lifeR, repW}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
	}
	if egressFile != nil {
		// fdEgress: the call's only way out, in a network namespace of its own.
		call.files = append(call.files, egressFile)
		cmd.ExtraFiles = append(cmd.ExtraFiles, egressFile)
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	}
	s.mu.Lock()
	s.live++
	s.mu.Unlock()
	started = true
	return call, nil
}

// reachOf is the directories to bind for the paths a call must reach (spec.Reach), told apart by
// the call's environment (reachKinds). A tool directory under a hidden place is bound itself, and
// each of its links is handed to reachDirs as a program, so the directory its target lies in is
// bound too (npm's and pip's bin folders hold links into the installation beside them); only a
// directory no one else may write is looked into, so no link planted there opens anything.
func (s *sandbox) reachOf(paths, env []string) []string {
	return reachOf(paths, reachKinds(env, os.Stat), s.never)
}

func reachOf(paths []string, kinds map[string]reachKind, never []string) []string {
	var reach []string
	for _, r := range paths {
		dirs, toolDir := reachOne(r, kinds, never)
		reach = append(reach, dirs...)
		if toolDir != "" {
			reach = append(reach, linkedFrom(toolDir, never)...)
		}
	}
	return reach
}

// reachOne is reachDirs of path r, of the kind kinds gives it; toolDir is r resolved when r is a
// tool directory under a hidden place whose links are to be followed (see reachOf).
func reachOne(r string, kinds map[string]reachKind, never []string) (dirs []string, toolDir string) {
	abs, err := filepath.Abs(r)
	if err != nil {
		return nil, ""
	}
	resolved := realPath(abs)
	fi, err := os.Stat(abs)
	if resolved == "" || err != nil {
		return nil, ""
	}
	kind := reachProgram
	if fi.IsDir() {
		kind = reachInstall
		if k, named := kinds[abs]; named {
			kind = k
		}
	}
	dirs = reachDirs(kind, abs, resolved, never)
	if kind == reachToolDir && underAny(resolved, never) && fi.Mode().Perm()&0o002 == 0 {
		toolDir = resolved
	}
	return dirs, toolDir
}

// linkedFrom is what the links of tool directory dir need bound: each link's own directory and
// the one its target lies in (reachDirs of a program). At most maxExposedEntries entries are read.
func linkedFrom(dir string, never []string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	entries, _ := f.ReadDir(maxExposedEntries)
	f.Close()
	var out []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		link := filepath.Join(dir, e.Name())
		target := realPath(link)
		if fi, err := os.Stat(target); target == "" || err != nil || fi.IsDir() {
			continue
		}
		out = append(out, reachDirs(reachProgram, link, target, never)...)
	}
	return out
}

// sandboxCall is one call from Command to End.
type sandboxCall struct {
	s                *sandbox
	workdir          string
	gitKind          string // "dir", "file", "link" or ""
	gitMode          fs.FileMode
	gitLink          string // the target, when .git is a link
	nested           *nestedGitCall
	files            []*os.File
	lifeline         *os.File
	reportR, reportW *os.File
	report           helperReport
	ended            bool
	cgroup           *callCgroup // nil without the cgroup layer
}

func (c *sandboxCall) End(ctx context.Context) (Ended, error) {
	if c.ended {
		return Ended{}, nil
	}
	c.ended = true
	// Our copy of the report's write end goes first, so that the read ends with the init.
	c.reportW.Close()
	data, _ := io.ReadAll(io.LimitReader(c.reportR, 1<<20))
	c.reportR.Close()
	for _, f := range c.files {
		f.Close()
	}
	c.lifeline.Close()
	c.s.mu.Lock()
	c.s.live--
	c.s.mu.Unlock()
	var ended Ended
	limit, cgErr := c.cgroup.end()
	if cgErr != nil {
		cgErr = fmt.Errorf("sandbox: %w", cgErr)
	}
	ended.Limit = limit
	if len(data) > 0 {
		if err := json.Unmarshal(data, &c.report); err != nil {
			return ended, errors.Join(fmt.Errorf("sandbox: unreadable report from the call's init: %w", err), cgErr)
		}
		if c.report.Error != "" {
			return ended, &SetupError{Stage: c.report.Stage, Msg: c.report.Error}
		}
		ended = Ended{Leftovers: c.report.Leftovers, ExitCode: c.report.Exit, Signal: c.report.Signal, Limit: limit}
	}
	// No report: the init was killed (a timeout's SIGKILL, the OOM killer), and with it
	// everything of the call.
	return ended, errors.Join(cgErr, c.restoreGit(), c.nested.end())
}

// restoreGit undoes a .git the call made where there was no .git directory to lay a layer over:
// none at all, or a link (the agent could not change a .git file, which is bound read-only).
func (c *sandboxCall) restoreGit() error {
	if c.workdir == "" || c.gitKind == "dir" || c.gitKind == "file" {
		return nil
	}
	p := filepath.Join(c.workdir, ".git")
	kind, _, link := gitKindOf(c.workdir)
	if kind == c.gitKind && link == c.gitLink {
		return nil
	}
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("remove the .git the agent made in the workspace: %w", err)
	}
	if c.gitKind == "link" {
		return os.Symlink(c.gitLink, p)
	}
	return nil
}

// gitKindOf says what the workspace's .git is, without following a link.
func gitKindOf(workdir string) (kind string, mode fs.FileMode, link string) {
	fi, err := os.Lstat(filepath.Join(workdir, ".git"))
	switch {
	case err != nil:
		return "", 0, ""
	case fi.IsDir():
		return "dir", fi.Mode(), ""
	case fi.Mode()&fs.ModeSymlink != 0:
		link, _ = os.Readlink(filepath.Join(workdir, ".git"))
		return "link", fi.Mode(), link
	case fi.Mode().IsRegular():
		return "file", fi.Mode(), ""
	}
	return "other", fi.Mode(), ""
}

func (s *sandbox) CheckNoneLeft(ctx context.Context) error {
	s.mu.Lock()
	live := s.live
	s.mu.Unlock()
	if live > 0 {
		return fmt.Errorf("%w: %d sandboxed call(s) in progress", ErrAgentAlive, live)
	}
	if s.id.lease != nil {
		// The uid is this run's alone: any process of it is this run's.
		return checkUID(s.id.uid)
	}
	return nil
}

func (s *sandbox) Close(context.Context) error {
	s.inspected()
	return nil
}

// inspected ends a jail Inspect made: nothing was given away.
func (s *sandbox) inspected() {
	s.closeUserns()
	if s.etc != "" {
		_ = os.RemoveAll(s.etc)
	}
	s.id.lease.release()
}

func (s *sandbox) closeUserns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, f := range s.userns {
		f.Close()
		delete(s.userns, k)
	}
}

// usernsFor returns a user namespace that maps the workspace owner's uid and gid to the agent's:
// attached to the workspace's bind mount (MOUNT_ATTR_IDMAP), it shows the owner's files as the
// agent's and stores what the agent writes as the owner's, with no change on disk. A namespace
// lives as long as a descriptor to it, so one holder process per owner and run is enough.
func (s *sandbox) usernsFor(o owner) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.userns[o]; f != nil {
		return f, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// The holder only has to live until its namespace is opened: cat, reading a pipe until the
	// studio closes it, where there is one (it starts in a fraction of the studio's time), else
	// the studio binary itself.
	holder := &exec.Cmd{Path: "/proc/self/exe", Args: []string{holderArg0}, Stdin: r, Env: []string{}}
	for _, c := range []string{"/bin/cat", "/usr/bin/cat"} {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			holder.Path, holder.Args = c, []string{c}
			break
		}
	}
	holder.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: o.UID, HostID: s.id.uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: o.GID, HostID: s.id.gid, Size: 1}},
	}
	if err := holder.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("make the workspace's id mapping: %w", err)
	}
	f, err := os.Open("/proc/" + strconv.Itoa(holder.Process.Pid) + "/ns/user")
	w.Close() // the holder reads EOF and exits
	werr := holder.Wait()
	if err != nil {
		return nil, fmt.Errorf("make the workspace's id mapping: %w", err)
	}
	if werr != nil {
		f.Close()
		return nil, fmt.Errorf("make the workspace's id mapping: holder: %w", werr)
	}
	s.userns[o] = f
	return f, nil
}

// memFile is v as JSON in an anonymous memory file, read from its start.
func memFile(name string, v any) (*os.File, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// chownTree gives dir and everything in it to uid/gid, following no link.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
