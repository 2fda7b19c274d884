package jail

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// reachKind says what a path a call must reach is to the call (Spec.Reach lists paths only; the
// call's environment tells them apart).
type reachKind int

const (
	// reachProgram is a file the call runs: its program, an entry of a tool directory, a variable
	// naming an executable (GODOT_BIN).
	reachProgram reachKind = iota
	// reachToolDir is a directory on the call's PATH.
	reachToolDir
	// reachInstall is the folder a toolchain variable names (installVar), or one the caller asked
	// for by name rather than through the environment.
	reachInstall
	// reachOther is any other folder a variable names: XDG_CONFIG_HOME, CARGO_HOME, ...
	reachOther
)

// installVar reports whether variable k names a toolchain's installation: program files a
// setup action unpacked, and no configuration of a user's. GOROOT, a JDK, the .NET root, rustup's
// toolchains and the Android SDK are found through these, wherever the runner put them.
// CARGO_HOME, GRADLE_USER_HOME, XDG_* and the like are not: they hold a user's configuration and
// credentials beside whatever else.
func installVar(k string) bool {
	switch k {
	case "GOROOT", "JAVA_HOME", "DOTNET_ROOT", "RUSTUP_HOME", "ANDROID_HOME", "ANDROID_SDK_ROOT",
		"ANDROID_NDK", "ANDROID_NDK_HOME", "ANDROID_NDK_ROOT", "ANDROID_NDK_LATEST_HOME":
		return true
	}
	return strings.HasPrefix(k, "JAVA_HOME_") // the hosted images' JAVA_HOME_17_X64, ...
}

// installation reports whether dir, below the hidden place hidden, is an installation a tool
// cache holds (the runner's _work/_tool/go/1.22.0/x64) rather than a home's own folder: at least
// two levels below the hidden place, and no folder on the way is a dot-folder (~/.cargo,
// ~/.local, ~/.config hold a user's configuration beside their programs).
func installation(dir, hidden string) bool {
	rel, err := filepath.Rel(hidden, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if len(parts) < 2 {
		return false
	}
	for _, part := range parts {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// reachKinds classifies the directories of a call's reach by its environment: PATH entries are
// tool directories, a folder a variable names is the variable's kind, and so is the folder of a
// file a variable names, unless the file is an executable (GODOT_BIN: a program, whose folder is
// bound like a program's). A directory the caller names that no variable does is the caller's own
// choice (reachInstall). Where two variables disagree the narrower kind wins. Keys are clean
// paths; stat tells files from folders.
func reachKinds(env []string, stat func(string) (fs.FileInfo, error)) map[string]reachKind {
	kinds := map[string]reachKind{}
	set := func(p string, k reachKind) {
		// PATH entries first, then the folders no toolchain variable vouches for.
		if old, seen := kinds[p]; !seen || (old == reachInstall && k == reachOther) {
			kinds[p] = k
		}
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(v) {
				if filepath.IsAbs(d) {
					kinds[filepath.Clean(d)] = reachToolDir
				}
			}
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "PATH" || !filepath.IsAbs(v) || strings.ContainsRune(v, filepath.ListSeparator) {
			continue
		}
		v = filepath.Clean(v)
		kind := reachOther
		if installVar(k) {
			kind = reachInstall
		}
		fi, err := stat(v)
		switch {
		case err != nil:
		case fi.IsDir():
			set(v, kind)
		case fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0:
			set(filepath.Dir(v), reachInstall) // a program: its folder, as for the call's own
		default:
			set(filepath.Dir(v), kind) // a configuration file (PIP_CONFIG_FILE): its folder is a variable's
		}
	}
	return kinds
}

// xdgHomes are the XDG base directories and where they lie by default, relative to HOME.
var xdgHomes = map[string]string{
	"XDG_CONFIG_HOME": ".config",
	"XDG_CACHE_HOME":  ".cache",
	"XDG_DATA_HOME":   ".local/share",
	"XDG_STATE_HOME":  ".local/state",
}

// confineEnv takes out of env every variable that names a path under a hidden place (never) that
// the call cannot reach (none of bound holds it): the call would otherwise look for its
// configuration at the runner's, find an empty read-only folder, and a tool that wants to write
// there would fail. An XDG base directory is pointed at its default below the call's own HOME
// instead (what the variable unset would mean, said outright); every other such variable is
// dropped, so the tool falls back to its default, which is below the call's HOME too
// (CARGO_HOME, GNUPGHOME, ...). HOME, the working directories, TMPDIR and PATH are the caller's.
// resolve resolves a path's links ("" when it does not exist).
func confineEnv(env, never, bound []string, resolve func(string) string) []string {
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "PWD", "OLDPWD", "TMPDIR", "PATH":
			out = append(out, kv)
			continue
		}
		if !filepath.IsAbs(v) || strings.ContainsRune(v, filepath.ListSeparator) || reachable(filepath.Clean(v), never, bound, resolve) {
			out = append(out, kv)
			continue
		}
		if rel, xdg := xdgHomes[k]; xdg && filepath.IsAbs(home) {
			out = append(out, k+"="+filepath.Join(home, rel))
		}
	}
	return out
}

// reachable reports whether the call sees p as the host has it: p is under no hidden place, or
// one of bound holds it (p as written and p resolved must both qualify).
func reachable(p string, never, bound []string, resolve func(string) string) bool {
	for _, q := range []string{p, resolve(p)} {
		if q != "" && underAny(q, never) && !underAny(q, bound) {
			return false
		}
	}
	return true
}
