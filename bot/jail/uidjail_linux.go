package jail

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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
	}
	return Status{Mode: ModeUIDJail, Confined: true, User: j.id.user, UID: j.id.uid, GID: j.id.gid, Leased: j.id.allocated,
		PIDNamespace: j.pidns, Reason: j.sandboxReason, NoPIDNamespace: j.pidnsReason, Layers: layers, Notes: j.notes}
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
	// does, it fails saying what it could not reach.
	j.exposeReach(ctx, s.Reach)
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
	return &uidCall{j: j, guard: guard, nested: nested}, nil
}

type uidCall struct {
	j      *uidJail
	guard  *gitGuard
	nested *nestedGitCall
}

func (c *uidCall) End(ctx context.Context) (Ended, error) {
	killed, err := c.j.Sweep(ctx)
	if err != nil {
		c.guard.close()
		c.nested.close()
		return Ended{Leftovers: killed}, err
	}
	// Nothing of the agent is alive to race the restore.
	return Ended{Leftovers: killed}, errors.Join(c.guard.restore(), c.nested.end())
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
