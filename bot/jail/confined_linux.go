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

// confined runs agent processes as uid/gid, optionally in a PID namespace.
type confined struct {
	uid, gid int
	user     string
	pidns    bool
	reason   string
	limit    time.Duration

	mu      sync.Mutex
	roots   []handedRoot
	reclaim map[string]owner // entries whose original owner is not their root's
	modes   []modeChange     // ancestors made traversable, in the order they were changed
}

type owner struct{ uid, gid int }

type handedRoot struct {
	path  string
	owner owner // the root's original owner; what the agent created inside goes back to it
}

type modeChange struct {
	path string
	old  fs.FileMode
}

func (j *confined) Status() Status {
	return Status{Confined: true, User: j.user, UID: j.uid, GID: j.gid, PIDNamespace: j.pidns, Reason: j.reason}
}

func (j *confined) Confine(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Setpgid = true
	// An empty Groups list with NoSetGroups unset clears the supplementary groups (setgroups(0)),
	// so the agent keeps none of root's (docker, adm, ...).
	a.Credential = &syscall.Credential{Uid: uint32(j.uid), Gid: uint32(j.gid), Groups: []uint32{}}
	if j.pidns {
		a.Cloneflags |= syscall.CLONE_NEWPID
	}
	return nil
}

func (j *confined) Sweep(ctx context.Context) (int, error) {
	killed := map[int]bool{}
	deadline := time.Now().Add(j.limit)
	for {
		procs, err := processesOf(j.uid)
		if err != nil {
			return len(killed), fmt.Errorf("sweep agent processes: %w", err)
		}
		if len(procs) == 0 {
			return len(killed), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return len(killed), fmt.Errorf("sweep agent processes: after %s: %w: %s", j.limit, ErrAgentAlive, describe(procs))
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

func (j *confined) CheckNoneLeft(ctx context.Context) error {
	procs, err := processesOf(j.uid)
	if err != nil {
		return fmt.Errorf("check for agent processes: %w", err)
	}
	if len(procs) > 0 {
		return fmt.Errorf("%w as uid %d: %s", ErrAgentAlive, j.uid, describe(procs))
	}
	return nil
}

func (j *confined) Handover(ctx context.Context, paths ...string) error {
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

func (j *confined) handover(p string) error {
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
	agent := owner{j.uid, j.gid}
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
		o := ownerOf(info)
		if o == agent {
			return nil
		}
		if _, seen := j.reclaim[path]; !seen && o != root.owner {
			j.reclaim[path] = o
		}
		return os.Lchown(path, j.uid, j.gid)
	})
	if err != nil {
		return err
	}
	return j.traversable(abs)
}

// traversable gives o+x to every ancestor of abs that lacks it, remembering the old modes.
func (j *confined) traversable(abs string) error {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			old := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
			if err := os.Chmod(dir, old|0o001); err != nil {
				return fmt.Errorf("make %s traversable: %w", dir, err)
			}
			j.modes = append(j.modes, modeChange{path: dir, old: old})
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

func (j *confined) Expose(ctx context.Context, paths ...string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
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

// root returns the recorded root for abs, recording it (with its original owner) the first time.
func (j *confined) root(abs string, o owner) handedRoot {
	for _, r := range j.roots {
		if r.path == abs {
			return r
		}
	}
	if o.uid == j.uid {
		// Already the agent's before any handover (a leftover): give it to the studio afterwards.
		o = owner{os.Getuid(), os.Getgid()}
	}
	r := handedRoot{path: abs, owner: o}
	j.roots = append(j.roots, r)
	return r
}

func (j *confined) Reclaim(ctx context.Context) error {
	// Reclaiming under a live agent would race it the same way a handover would: kill first.
	if _, err := j.Sweep(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("reclaim from the agent: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
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
			if o.uid != j.uid && o.gid != j.gid {
				return nil
			}
			to, ok := j.reclaim[path]
			if !ok {
				to = r.owner
			}
			if err := os.Lchown(path, to.uid, to.gid); err != nil {
				errs = append(errs, err)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for i := len(j.modes) - 1; i >= 0; i-- {
		if err := os.Chmod(j.modes[i].path, j.modes[i].old); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	j.roots, j.modes, j.reclaim = nil, nil, map[string]owner{}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("reclaim from the agent: %w", err)
	}
	return nil
}

func ownerOf(fi fs.FileInfo) owner {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return owner{int(st.Uid), int(st.Gid)}
	}
	return owner{-1, -1}
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
