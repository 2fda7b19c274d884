package jail

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// identity is the agent's account for one jail.
type identity struct {
	uid, gid int
	user     string
	lease    *lease // nil for an account the run shares (a named agent-user)
	// allocated says the uid was leased for this run from the auto range (not given).
	allocated bool
}

// uidJail is the fallback: agent processes run as the agent's uid (optionally in a PID namespace),
// the folders a call writes are handed to that uid for the call, and a uid sweep finds leftovers.
type uidJail struct {
	id            identity
	pidns         bool
	pidnsReason   string // why no PID namespace
	sandboxReason string // why not the sandbox
	limit         time.Duration
	notes         []string // what dead runs had left, ended at setup
	// never are the homes and the runner's folders (privateHostPlaces): the jail cannot hide
	// them, but opens nothing of them for a variable's folder (see Command).
	never  []string
	limits callLimits
	// freshSession: each call starts through sessionExec, in a session keyring of its own
	// (noSession says why not).
	freshSession bool
	noSession    string

	mu      sync.Mutex
	roots   []handedRoot
	reclaim map[string]owner // entries whose original owner is not their root's
	modes   []modeChange     // ancestors made traversable, in the order they were changed
	nested  nestedGitWatch   // the workspaces' own nested .git entries (nestedgit.go)
}

type owner struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
}

type handedRoot struct {
	path  string
	owner owner // the root's original owner; what the agent created inside goes back to it
}

type modeChange struct {
	Path string      `json:"path"`
	Old  fs.FileMode `json:"old"`
}

func (j *uidJail) Status() Status {
	layers := []Layer{
		{ID: "uid", Name: LayerUID, Active: true, Note: uidNote(j.id)},
		{ID: "mount-namespace", Name: LayerMountNS, Note: "no sandbox: " + j.sandboxReason},
		{ID: "pid-namespace", Name: LayerPIDNS, Active: j.pidns, Note: j.pidnsReason},
		{ID: "git-dir", Name: LayerGitGuard, Active: true},
		{ID: "resource-limits", Name: LayerRlimits, Note: j.rlimitsNote()},
		j.cgroupLayer(),
		{ID: "seccomp", Name: LayerSeccomp, Note: "no sandbox: set-uid bits and file capabilities the agent puts on workspace files are dropped by the kernel when the files are given back (lchown)"},
		{ID: "keyring", Name: LayerKeyring, Active: j.freshSession, Note: j.keyringNote()},
		{ID: "network", Name: LayerNetwork, Note: "no sandbox: the uid jail cannot give a call a network namespace of its own, so the agent reaches any host"},
	}
	return Status{Mode: ModeUIDJail, Confined: true, User: j.id.user, UID: j.id.uid, GID: j.id.gid, Leased: j.id.allocated,
		PIDNamespace: j.pidns, Reason: j.sandboxReason, NoPIDNamespace: j.pidnsReason, Layers: layers, Notes: j.notes}
}

func (j *uidJail) keyringNote() string {
	if !j.freshSession {
		return "calls share the studio's session keyring: " + j.noSession
	}
	if j.id.lease == nil {
		return "a fresh session keyring per call; the uid's own keyrings are emptied before each call, but the account is shared with other runs"
	}
	return "a fresh session keyring per call; the uid's own keyrings emptied before each call and when it is leased and given back"
}

func uidNote(id identity) string {
	if id.user == AutoUser {
		return fmt.Sprintf("a uid of its own for each run, leased from %d under a host-wide lock", id.uid)
	}
	if id.allocated {
		return fmt.Sprintf("uid %d, leased for this run only", id.uid)
	}
	return fmt.Sprintf("uid %d, an account other runs on the host may share", id.uid)
}

// Command hands the call's folders to the agent, opens the way to what it must reach, guards the
// workspace's .git and confines cmd.
func (j *uidJail) Command(ctx context.Context, cmd *exec.Cmd, s Spec) (Call, error) {
	if err := j.Handover(ctx, s.Workdir, s.Scratch); err != nil {
		return nil, err
	}
	// A place that cannot be opened up is not fatal: the command may not need it, and if it
	// does, it fails saying what it could not reach. What the sandbox would not bind of a home
	// (a configuration folder a variable names) is not opened either, and the variables naming
	// it leave the call's environment as in the sandbox; a tool directory under a home is still
	// opened, ancestors and all ("What it does not do" in docs/security.md).
	kinds := reachKinds(cmd.Env, os.Stat)
	reach := j.reachWanted(s.Reach, kinds)
	j.exposeReach(ctx, reach)
	bound := reachOf(reach, kinds, j.never)
	for _, own := range []string{s.Workdir, s.Scratch} {
		if r := realPath(own); r != "" { // "" would hold every path (under)
			bound = append(bound, r)
		}
	}
	cmd.Env = confineEnv(cmd.Env, j.never, bound, realPath)
	guard, err := guardGitDir(s.Workdir)
	if err != nil {
		return nil, err
	}
	nested, err := j.nested.begin(s.Workdir, true)
	if err != nil {
		guard.close()
		return nil, err
	}
	if err := j.Confine(cmd); err != nil {
		guard.close()
		nested.close()
		return nil, err
	}
	if s.Scratch != "" {
		cmd.Env = setEnv(cmd.Env, "TMPDIR", s.Scratch)
	}
	call := &uidCall{j: j, guard: guard, nested: nested}
	if call.cgroup, err = j.limits.create(); err != nil {
		guard.close()
		nested.close()
		return nil, fmt.Errorf("uid jail: %w", err)
	}
	if call.cgroup != nil && call.cgroup.v2 {
		// v2 starts the agent in its cgroup (clone3 with CLONE_INTO_CGROUP): nothing of it runs
		// outside, not for an instant.
		fd, err := syscall.Open(call.cgroup.mem, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			guard.close()
			nested.close()
			_ = call.cgroup.remove()
			return nil, fmt.Errorf("uid jail: open the call's cgroup: %w", err)
		}
		call.cgroupFD = fd
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	} else if call.cgroup != nil {
		call.traced, cmd.SysProcAttr.Ptrace = true, true
	}
	if j.freshSession && cmd.Err == nil {
		if call.session, err = wrapFreshSession(cmd); err != nil {
			guard.close()
			nested.close()
			return nil, err
		}
	}
	return call, nil
}

type uidCall struct {
	j        *uidJail
	guard    *gitGuard
	cgroup   *callCgroup // nil without the cgroup layer
	cgroupFD int         // v2: the cgroup the agent is started in (0: none)
	traced   bool        // v1: started stopped, until start has put it in the cgroup
	session  *freshSession
	nested   *nestedGitCall
}

// start starts the agent and, before its program runs its first instruction, puts it in the call's
// cgroup and makes it the OOM killer's first choice. v2 started it in the cgroup already
// (CgroupFD). v1 cannot start a process in a cgroup, so the process is started traced: it stops
// at the exec (SIGTRAP) until it has been moved, then runs untraced. The tracer is the thread that
// forked, hence the locked thread.
func (c *uidCall) start(cmd *exec.Cmd) error {
	if !c.traced {
		if err := cmd.Start(); err != nil {
			return err
		}
		_ = writeControl("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/oom_score_adj", "1000")
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	_, err := syscall.Wait4(pid, &ws, unix.WALL, nil)
	if err == nil && !ws.Stopped() {
		err = fmt.Errorf("it did not stop at its start (%v)", ws)
	}
	if err == nil {
		_ = writeControl("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", "1000")
		for _, f := range c.cgroup.procsFiles() {
			if err = writeControl(f, strconv.Itoa(pid)); err != nil {
				break
			}
		}
	}
	if derr := syscall.PtraceDetach(pid); err == nil {
		err = derr
	}
	if err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return fmt.Errorf("uid jail: put the agent in its cgroup: %w", err)
	}
	return nil
}

func (c *uidCall) End(ctx context.Context) (Ended, error) {
	if c.cgroupFD > 0 {
		syscall.Close(c.cgroupFD)
		c.cgroupFD = 0
	}
	killed, err := c.j.Sweep(ctx)
	// Every process of the agent uid is dead: what is left in the cgroup is nothing.
	limit, cgErr := c.cgroup.end()
	if err == nil && c.j.id.lease != nil {
		// The uid is this run's alone: what it owns in the host's shared temporary places is
		// the call's, and tmpfs pages stay charged (to no live cgroup) until they are removed.
		cgErr = errors.Join(cgErr, removeOwned(c.j.id.uid, c.j.handed(), sharedTemp...))
	}
	ended := Ended{Leftovers: killed, Limit: limit}
	if err = errors.Join(err, cgErr); err != nil {
		c.guard.close()
		c.nested.close()
		return ended, err
	}
	// What the call kept in the uid's keyrings is not the next call's (sessionExec clears them
	// too, but a key dies some milliseconds after it is unlinked, readable by serial until then).
	// Best effort: an agent that took away its own right to clear them keeps them for the rest
	// of its run, whose uid it is; the next lease refuses the uid.
	if c.j.id.lease != nil {
		if clearUIDKeyrings(c.j.id.uid, c.j.id.gid) == nil {
			waitForKeysGone(c.j.id.uid, time.Second)
		}
	}
	if why := c.session.failure(); why != "" {
		_ = c.guard.restore()
		_ = c.nested.end()
		return Ended{Leftovers: killed}, &SetupError{Stage: "exec", Msg: why}
	}
	// Nothing of the agent is alive to race the restore.
	return ended, errors.Join(c.guard.restore(), c.nested.end())
}

// sharedTemp are the host's temporary places a uid-jailed agent can write.
var sharedTemp = []string{"/tmp", "/var/tmp", "/dev/shm"}

// handed lists the folders handed to the agent (the call's scratch folder among them): the
// caller's, given back later.
func (j *uidJail) handed() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, r := range j.roots {
		out = append(out, r.path)
	}
	return out
}

// removeOwned removes the entries of dirs that uid owns (following no link), but for those that
// are or hold one of keep.
func removeOwned(uid int, keep []string, dirs ...string) error {
	var errs []error
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				continue
			}
			p := filepath.Join(dir, e.Name())
			kept := false
			for _, k := range keep {
				if k == p || strings.HasPrefix(k, p+"/") {
					kept = true
				}
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && !kept {
				if err := os.RemoveAll(p); err != nil {
					errs = append(errs, fmt.Errorf("remove what the agent left in %s: %w", dir, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// rlimitsNote says the uid jail sets no rlimits, and what bounds processes instead.
func (j *uidJail) rlimitsNote() string {
	if j.limits.cg != nil {
		return "none in the uid jail: the call's cgroup bounds its processes"
	}
	return "none in the uid jail, and no cgroup: a call's processes are not bounded"
}

// cgroupLayer is the cgroup's line in Status, with what the uid jail cannot bound.
func (j *uidJail) cgroupLayer() Layer {
	l := j.limits.layer()
	if !l.Active {
		l.Note = "no cgroup (" + j.limits.why + "): a call's memory and processes are not bounded"
		return l
	}
	l.Note += "; in the uid jail the agent's files in the host's /tmp and /dev/shm are not size-bounded"
	if j.id.lease == nil {
		l.Note += " and outlive the call (a named agent-user: they may be another run's)"
	}
	return l
}

// Confine prepares cmd before Start: the agent's uid and gid with no supplementary groups, its
// own process group, and CLONE_NEWPID when available.
func (j *uidJail) Confine(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Setpgid = true
	// An empty Groups list with NoSetGroups unset clears the supplementary groups (setgroups(0)),
	// so the agent keeps none of root's (docker, adm, ...).
	a.Credential = &syscall.Credential{Uid: uint32(j.id.uid), Gid: uint32(j.id.gid), Groups: []uint32{}}
	if j.pidns {
		a.Cloneflags |= syscall.CLONE_NEWPID
	}
	return nil
}

// Sweep SIGKILLs every process of the agent uid until none is left (bounded) and returns how
// many it killed; the error wraps ErrAgentAlive when some survived the bound.
func (j *uidJail) Sweep(ctx context.Context) (int, error) { return sweepUID(ctx, j.id.uid, j.limit) }

func sweepUID(ctx context.Context, uid int, limit time.Duration) (int, error) {
	if limit <= 0 {
		limit = DefaultSweepLimit
	}
	killed := map[int]bool{}
	deadline := time.Now().Add(limit)
	for {
		procs, err := processesOf(uid)
		if err != nil {
			return len(killed), fmt.Errorf("sweep agent processes: %w", err)
		}
		if len(procs) == 0 {
			return len(killed), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return len(killed), fmt.Errorf("sweep agent processes: after %s: %w: %s", limit, ErrAgentAlive, describe(procs))
		}
		for _, p := range procs {
			// SIGKILL cannot be caught; a process forking meanwhile is found by the next scan.
			if syscall.Kill(p.pid, syscall.SIGKILL) == nil {
				killed[p.pid] = true
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (j *uidJail) CheckNoneLeft(ctx context.Context) error { return checkUID(j.id.uid) }

func checkUID(uid int) error {
	procs, err := processesOf(uid)
	if err != nil {
		return fmt.Errorf("check for agent processes: %w", err)
	}
	if len(procs) > 0 {
		return fmt.Errorf("%w as uid %d: %s", ErrAgentAlive, uid, describe(procs))
	}
	return nil
}

// Handover gives directories to the agent: lchown -R to the agent uid/gid (entries it already
// owns are skipped) and o+x on each ancestor that lacks it, remembering old owners and modes in
// the lease's journal first. Symbolic links are changed, never followed; a file with more than
// one link is left alone (its other name may be a root-only file outside the folder).
func (j *uidJail) Handover(ctx context.Context, paths ...string) error {
	// Ownership changes race a live agent (a directory swapped for a symlink between the scan
	// and the chown); with none alive there is nothing to race.
	if err := j.CheckNoneLeft(ctx); err != nil {
		return fmt.Errorf("hand over to the agent: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := j.handover(p); err != nil {
			return fmt.Errorf("hand over %s to the agent: %w", p, err)
		}
	}
	return nil
}

func (j *uidJail) handover(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return errors.New("it is a symbolic link")
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil { // real ancestors, for the o+x below
		return err
	}
	root := j.root(abs, ownerOf(fi))
	if err := j.journal(); err != nil {
		return err
	}
	agent := owner{j.id.uid, j.id.gid}
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		info, err := d.Info() // lstat: symbolic links are changed themselves, never followed
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && info.Mode().IsRegular() && st.Nlink > 1 {
			return nil
		}
		o := ownerOf(info)
		if o == agent {
			return nil
		}
		if _, seen := j.reclaim[path]; !seen && o != root.owner {
			j.reclaim[path] = o
		}
		return os.Lchown(path, j.id.uid, j.id.gid)
	})
	if err != nil {
		return err
	}
	return j.traversable(abs)
}

// journal records what is given away, before it is, so a run that dies cannot leave it given.
func (j *uidJail) journal() error {
	jn := journal{Exceptions: j.reclaim, Modes: j.modes}
	for _, r := range j.roots {
		jn.Roots = append(jn.Roots, journalRoot{Path: r.path, Owner: r.owner})
	}
	return j.id.lease.writeJournal(jn)
}

// traversable gives o+x to every ancestor of abs that lacks it, remembering the old modes.
func (j *uidJail) traversable(abs string) error {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			old := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
			j.modes = append(j.modes, modeChange{Path: dir, Old: old})
			if err := j.journal(); err != nil {
				return err
			}
			if err := os.Chmod(dir, old|0o001); err != nil {
				return fmt.Errorf("make %s traversable: %w", dir, err)
			}
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// Expose makes the given paths reachable by the agent without giving them away: o+x on each
// ancestor directory that lacks it (restored by Reclaim). The Codex binary of a checkout in a
// private directory needs it. A link is followed only where the agent cannot have planted it.
func (j *uidJail) Expose(ctx context.Context, paths ...string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if j.agentCouldPlant(abs) {
			continue // the agent's own doing: it reaches it already, and it is not to be trusted
		}
		if err := j.traversable(abs); err != nil {
			return fmt.Errorf("expose %s to the agent: %w", p, err)
		}
		// The real location too, when p is a link (npm's .bin entries are).
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			if err := j.traversable(real); err != nil {
				return fmt.Errorf("expose %s to the agent: %w", real, err)
			}
		}
	}
	return nil
}

// reachWanted keeps the paths of reach the sandbox would bind something for (reachOf): under a
// home or the runner's folders, a configuration folder a variable names is left closed.
func (j *uidJail) reachWanted(reach []string, kinds map[string]reachKind) []string {
	var out []string
	for _, r := range reach {
		if dirs, _ := reachOne(r, kinds, j.never); len(dirs) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// maxExposedEntries bounds how many entries of one tool directory are exposed.
const maxExposedEntries = 4096

// exposeReach exposes each path and, for a directory, each of its entries: a tool directory's
// links (npm's and pyenv's bin folders hold links) point elsewhere, whose ancestors must be
// traversable too. The programs themselves must be world-readable and executable.
func (j *uidJail) exposeReach(ctx context.Context, reach []string) {
	for _, r := range reach {
		if !hidden(r) {
			continue // the agent reaches it already; its links are the host's business
		}
		paths := []string{r}
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			entries, _ := os.ReadDir(r)
			for i, e := range entries {
				if i == maxExposedEntries {
					break
				}
				paths = append(paths, filepath.Join(r, e.Name()))
			}
		}
		_ = j.Expose(ctx, paths...)
	}
}

// hidden reports whether some directory on the way to p (p included) is closed to others.
func hidden(p string) bool {
	for d := p; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || (fi.IsDir() && fi.Mode().Perm()&0o001 == 0) {
			return err == nil
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// agentCouldPlant reports whether the agent could have put the entry at abs where it is: it owns
// the entry, or it could create or replace entries in one of its directories (its own, one
// anyone may write without the sticky bit, or one handed to it).
func (j *uidJail) agentCouldPlant(abs string) bool {
	for _, r := range j.roots {
		if under(abs, r.path) {
			return true
		}
	}
	if fi, err := os.Lstat(abs); err == nil && ownerOf(fi).UID == j.id.uid {
		return true
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			return true // cannot tell: do not trust it
		}
		perm := fi.Mode()
		if ownerOf(fi).UID == j.id.uid || (perm.Perm()&0o002 != 0 && perm&fs.ModeSticky == 0) {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// root returns the recorded root for abs, recording it (with its original owner) the first time.
func (j *uidJail) root(abs string, o owner) handedRoot {
	for _, r := range j.roots {
		if r.path == abs {
			return r
		}
	}
	if o.UID == j.id.uid {
		// Already the agent's before any handover (a leftover): give it to the studio afterwards.
		o = owner{os.Getuid(), os.Getgid()}
	}
	r := handedRoot{path: abs, owner: o}
	j.roots = append(j.roots, r)
	return r
}

// Reclaim gives everything handed over back to its original owner (what the agent created goes
// to the owner of the handed-over directory) and restores the ancestors' modes.
func (j *uidJail) Reclaim(ctx context.Context) error {
	// Reclaiming under a live agent would race it the same way a handover would: kill first.
	if _, err := j.Sweep(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("reclaim from the agent: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.giveBack(); err != nil {
		return err
	}
	j.id.lease.dropJournal()
	return nil
}

// giveBack is Reclaim once no agent process lives.
func (j *uidJail) giveBack() error {
	var errs []error
	for i := len(j.roots) - 1; i >= 0; i-- {
		r := j.roots[i]
		err := filepath.WalkDir(r.path, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil // removed meanwhile
			}
			o := ownerOf(info)
			if o.UID != j.id.uid && o.GID != j.id.gid {
				return nil
			}
			to, ok := j.reclaim[path]
			if !ok {
				to = r.owner
			}
			if err := os.Lchown(path, to.UID, to.GID); err != nil {
				errs = append(errs, err)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for i := len(j.modes) - 1; i >= 0; i-- {
		if err := os.Chmod(j.modes[i].Path, j.modes[i].Old); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := stripSetID(j.id, privatePlaces); err != nil {
		errs = append(errs, err)
	}
	j.roots, j.modes, j.reclaim = nil, nil, map[string]owner{}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("reclaim from the agent: %w", err)
	}
	return nil
}

// inspected ends a jail Inspect made: nothing was given away.
func (j *uidJail) inspected() { j.id.lease.release() }

// Close gives everything back and releases the uid's lease.
func (j *uidJail) Close(ctx context.Context) error {
	err := j.Reclaim(ctx)
	if err == nil {
		j.id.lease.release()
	}
	return err
}

// stripSetID drops the set-uid and set-gid bits of every file of the agent's uid or gid in the
// host's temporary places, which anyone may write. Given back, the workspace's files lose them
// (the kernel clears them on chown); these are never given back, and a set-uid file of the agent
// would let whoever runs it act as the agent's uid in the next run that leases it. Called with no
// agent process alive; each file is changed through a descriptor that did not follow a link (a
// folder there without the sticky bit lets others swap an entry).
func stripSetID(id identity, places []string) error {
	var errs []error
	for _, place := range places {
		_ = filepath.WalkDir(place, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Mode()&(fs.ModeSetuid|fs.ModeSetgid) == 0 {
				return nil
			}
			if o := ownerOf(info); o.UID != id.uid && o.GID != id.gid {
				return nil
			}
			if err := dropSetID(p, id); err != nil {
				errs = append(errs, err)
			}
			return nil
		})
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("drop the set-id bits of the agent's files: %w", err)
	}
	return nil
}

func dropSetID(p string, id identity) error {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // gone, or a link now: not the file that was looked at
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || (int(st.Uid) != id.uid && int(st.Gid) != id.gid) {
		return nil
	}
	// A path descriptor cannot be fchmod'ed; its /proc/self/fd entry names the very inode.
	if err := unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), st.Mode&^(unix.S_IFMT|unix.S_ISUID|unix.S_ISGID)); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

func ownerOf(fi fs.FileInfo) owner {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return owner{int(st.Uid), int(st.Gid)}
	}
	return owner{-1, -1}
}

// setEnv returns env with key set to value (replacing an earlier entry).
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// process is one live process of the agent uid.
type process struct {
	pid  int
	comm string
}

// processesOf scans /proc for live (not zombie) processes any of whose uids (real, effective,
// saved, filesystem) is uid. The caller itself is never listed.
func processesOf(uid int) ([]process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	want := strconv.Itoa(uid)
	var out []process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue // exited meanwhile
		}
		var comm, state string
		match := false
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch k {
			case "Name":
				comm = strings.TrimSpace(v)
			case "State":
				state = strings.TrimSpace(v)
			case "Uid":
				for _, f := range strings.Fields(v) {
					match = match || f == want
				}
			}
		}
		if match && !strings.HasPrefix(state, "Z") && !strings.HasPrefix(state, "X") {
			out = append(out, process{pid: pid, comm: comm})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].pid < out[b].pid })
	return out, nil
}

func describe(procs []process) string {
	var parts []string
	for i, p := range procs {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(procs)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("pid %d (%s)", p.pid, p.comm))
	}
	return strings.Join(parts, ", ")
}
