package jail

import (
	"path/filepath"
	"sort"
	"strings"
)

// mountKind is one kind of mount the sandbox makes inside its new root.
type mountKind string

const (
	// mPrivate is a fresh writable tmpfs (mode 1777): /tmp, /var/tmp, /dev/shm. Gone with the call.
	mPrivate mountKind = "private"
	// mHide is an empty tmpfs over a host place the agent must not see (homes, the runner's
	// folders); read-only once the mounts below it exist.
	mHide mountKind = "hide"
	// mProc is a proc of the call's own PID namespace.
	mProc mountKind = "proc"
	// mDevpts is a devpts instance of the call's own.
	mDevpts mountKind = "devpts"
	// mWorkspace binds the workspace writable through an idmapped mount: its owner on disk is
	// the agent inside, with no ownership change on disk.
	mWorkspace mountKind = "workspace"
	// mGitDir lays a throwaway writable layer over the workspace's .git directory (overlayfs,
	// the upper layer in the call's private /tmp), or binds it read-only where overlayfs fails.
	mGitDir mountKind = "gitdir"
	// mReadOnlyFile binds a file read-only over itself (a .git file of a worktree).
	mReadOnlyFile mountKind = "rofile"
	// mNestedGit binds a .git file or directory below the workspace's top (a submodule's: see
	// nestedgit.go) read-only over itself, taken from the idmapped workspace, so that the agent's
	// git finds it owned as the rest of the workspace and uses it, and cannot change it.
	mNestedGit mountKind = "nestedgit"
	// mScratch binds the call's scratch folder writable (the caller made it the agent's).
	mScratch mountKind = "scratch"
	// mReach binds a host directory read-only at its own path where a hidden or private place
	// covers it (the program's package, tool directories).
	mReach mountKind = "reach"
	// mFile binds a file the studio wrote (Source) read-only over a host file (the passwd and
	// group files that name the agent's uid).
	mFile mountKind = "file"
)

// mountOp is one step of the plan; paths are absolute, as the host and the sandbox both see them.
type mountOp struct {
	Kind   mountKind `json:"kind"`
	Target string    `json:"target"`
	Source string    `json:"source,omitempty"` // mFile only; else the host's Target itself
}

// planInput is what a call's mounts are decided from. Every path is absolute and clean, with no
// symbolic link in it (the caller resolved them).
type planInput struct {
	Workdir string
	// GitDir says what the workspace's .git is: "dir", "file" or "" (none).
	GitDir string
	// NestedGit are the .git files and directories below the workspace's top that it had before
	// its first call (submodules'): each is bound read-only over itself.
	NestedGit []string
	Scratch   string
	Reach     []string
	// Hide are the host's private places; Private the temporary places that exist on the host.
	Hide    []string
	Private []string
	// Files are files the studio wrote, each bound read-only over the host file its key names.
	Files map[string]string
}

// under reports whether p is q or lies below it.
func under(p, q string) bool {
	return p == q || q == "/" || strings.HasPrefix(p, q+"/")
}

func underAny(p string, qs []string) bool {
	for _, q := range qs {
		if under(p, q) {
			return true
		}
	}
	return false
}

// planMounts decides the mounts of one call, parents before children. It is pure: the helper
// carries the plan out inside the call's mount namespace.
func planMounts(in planInput) []mountOp {
	var ops []mountOp
	private := dedupe(in.Private, nil)
	for _, p := range private {
		ops = append(ops, mountOp{Kind: mPrivate, Target: p})
	}
	ops = append(ops, mountOp{Kind: mProc, Target: "/proc"}, mountOp{Kind: mDevpts, Target: "/dev/pts"})
	// A hidden place inside another, inside a private one, or inside the call's own folders is
	// hidden already or the agent's anyway; "/" is never hidden (it would hide the programs).
	var hide []string
	for _, h := range dedupe(in.Hide, private) {
		if h == "/" || (in.Workdir != "" && under(h, in.Workdir)) || (in.Scratch != "" && under(h, in.Scratch)) {
			continue
		}
		hide = append(hide, h)
	}
	for _, h := range hide {
		ops = append(ops, mountOp{Kind: mHide, Target: h})
	}
	covered := append(append([]string{}, private...), hide...)
	if in.Workdir != "" {
		ops = append(ops, mountOp{Kind: mWorkspace, Target: in.Workdir})
		switch in.GitDir {
		case "dir":
			ops = append(ops, mountOp{Kind: mGitDir, Target: filepath.Join(in.Workdir, ".git")})
		case "file":
			ops = append(ops, mountOp{Kind: mReadOnlyFile, Target: filepath.Join(in.Workdir, ".git")})
		}
		for _, n := range in.NestedGit {
			if under(n, in.Workdir) && n != filepath.Join(in.Workdir, ".git") {
				ops = append(ops, mountOp{Kind: mNestedGit, Target: n})
			}
		}
	}
	own := []string{}
	if in.Workdir != "" {
		own = append(own, in.Workdir)
	}
	if in.Scratch != "" && (in.Workdir == "" || !under(in.Scratch, in.Workdir)) {
		ops = append(ops, mountOp{Kind: mScratch, Target: in.Scratch})
		own = append(own, in.Scratch)
	}
	var reach []string
	for _, r := range in.Reach {
		// Only what a hidden or private place covers needs a mount; the rest of the host is
		// there already, read-only.
		if r != "" && r != "/" && underAny(r, covered) && !underAny(r, own) {
			reach = append(reach, r)
		}
	}
	for _, r := range dedupe(reach, nil) {
		ops = append(ops, mountOp{Kind: mReach, Target: r})
	}
	for _, target := range sortedKeys(in.Files) {
		if !underAny(target, covered) {
			ops = append(ops, mountOp{Kind: mFile, Target: target, Source: in.Files[target]})
		}
	}
	// Parents first: a mount must exist before the mounts made inside it.
	sort.SliceStable(ops, func(a, b int) bool { return depth(ops[a].Target) < depth(ops[b].Target) })
	return ops
}

// dedupe keeps each path once, drops paths below another kept path or below one of within, and
// sorts the rest.
func dedupe(paths, within []string) []string {
	sorted := append([]string{}, paths...)
	sort.Strings(sorted)
	var out []string
	for _, p := range sorted {
		if p == "" || underAny(p, within) || underAny(p, out) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// reachDirs are the directories to bind so that what kind says p is works inside the sandbox;
// resolved is p with its links resolved. A program inside an npm install needs the whole
// node_modules it lives in (the launcher runs a platform package beside it); a link needs the
// directory it sits in too. A home directory or a hidden place itself is never bound (it would
// bring back everything the sandbox hides).
//
// Outside the hidden places a bin directory brings its installation (lib/, share/ beside it,
// where its links point). Under a hidden place (a home, the runner's folders) what sits beside a
// bin directory is a home's configuration as often as an installation (~/.cargo holds
// config.toml and credentials.toml, ~/.local holds share/, ~/.config is a variable's folder), so
// there only the files a tool loads are bound: the tool directory itself, the directory each of
// its links resolves to (the caller hands those over as programs), and the parent of a bin
// directory only when it is an installation (see installation). A variable's folder under a
// hidden place is bound only when the variable names a toolchain (kind reachInstall) or the folder
// is an installation; otherwise nothing, and the caller takes the variable out of the call's
// environment (confineEnv).
func reachDirs(kind reachKind, p, resolved string, never []string) []string {
	dir := resolved
	if kind == reachProgram {
		dir = filepath.Dir(resolved)
	}
	for _, n := range never {
		if under(n, dir) {
			return nil // the directory is a home or holds a hidden place: binding it would undo the hiding
		}
	}
	hidden := ""
	for _, n := range never {
		if under(dir, n) && len(n) > len(hidden) {
			hidden = n
		}
	}
	pick := dir
	switch i := strings.Index(resolved, "/node_modules/"); {
	case i > 0:
		pick = resolved[:i+len("/node_modules")]
	case filepath.Base(dir) == "bin" && (hidden == "" || installation(filepath.Dir(dir), hidden)):
		pick = filepath.Dir(dir)
	case hidden != "" && kind == reachOther && !installation(dir, hidden):
		return nil
	}
	for _, n := range never {
		if pick == n || under(n, pick) {
			pick = dir
			break
		}
	}
	out := []string{pick}
	if linkDir := filepath.Dir(p); kind == reachProgram && p != resolved && !under(linkDir, pick) {
		out = append(out, linkDir)
	}
	return out
}
