package jail

import (
	"reflect"
	"testing"
)

func TestPlanMounts(t *testing.T) {
	base := []mountOp{{Kind: mPrivate, Target: "/tmp"}, {Kind: mProc, Target: "/proc"}, {Kind: mDevpts, Target: "/dev/pts"}}
	tests := []struct {
		name string
		in   planInput
		want []mountOp
	}{
		{
			name: "a runner: the workspace under a hidden home, the scratch in /tmp, tools under the home and elsewhere",
			in: planInput{
				Workdir: "/home/runner/work/hop/hop", GitDir: "dir", Scratch: "/tmp/studio-codex-call-1",
				Reach:   []string{"/home/runner/.cargo", "/usr/bin", "/home/runner/.cargo/bin", "/home/runner/work/hop/hop/node_modules/.bin", "/opt/hostedtoolcache/go/bin"},
				Hide:    []string{"/home", "/root", "/home/runner/work/_temp", "/home/runner"},
				Private: []string{"/tmp", "/dev/shm", "/var/tmp"},
				Files:   map[string]string{"/etc/passwd": "/tmp/etc/passwd"},
			},
			want: []mountOp{
				{Kind: mPrivate, Target: "/tmp"}, {Kind: mProc, Target: "/proc"}, {Kind: mHide, Target: "/home"}, {Kind: mHide, Target: "/root"},
				{Kind: mPrivate, Target: "/dev/shm"}, {Kind: mPrivate, Target: "/var/tmp"}, {Kind: mDevpts, Target: "/dev/pts"},
				{Kind: mScratch, Target: "/tmp/studio-codex-call-1"}, {Kind: mFile, Target: "/etc/passwd", Source: "/tmp/etc/passwd"},
				{Kind: mReach, Target: "/home/runner/.cargo"},
				{Kind: mWorkspace, Target: "/home/runner/work/hop/hop"}, {Kind: mGitDir, Target: "/home/runner/work/hop/hop/.git"},
			},
		},
		{
			name: "a worktree's .git file; a hidden place inside the workspace is the agent's anyway; / is never hidden",
			in:   planInput{Workdir: "/srv/ws", GitDir: "file", Scratch: "/srv/ws/.scratch", Hide: []string{"/", "/srv/ws/tmp"}, Private: []string{"/tmp"}},
			want: append(append([]mountOp{}, base...), mountOp{Kind: mWorkspace, Target: "/srv/ws"}, mountOp{Kind: mReadOnlyFile, Target: "/srv/ws/.git"}),
		},
		{
			name: "submodules' .git file and directory are bound read-only after the workspace; none outside it",
			in:   planInput{Workdir: "/srv/ws", GitDir: "dir", NestedGit: []string{"/srv/ws/lib/.git", "/srv/ws/vendor/a/b/.git", "/srv/other/.git", "/srv/ws/.git"}, Private: []string{"/tmp"}},
			want: append(append([]mountOp{}, base...), mountOp{Kind: mWorkspace, Target: "/srv/ws"}, mountOp{Kind: mGitDir, Target: "/srv/ws/.git"},
				mountOp{Kind: mNestedGit, Target: "/srv/ws/lib/.git"}, mountOp{Kind: mNestedGit, Target: "/srv/ws/vendor/a/b/.git"}),
		},
		{
			name: "no workspace: only what the call was given",
			in:   planInput{Scratch: "/tmp/s", Reach: []string{"/tmp/tools/bin", "/tmp/tools/bin/sub", ""}, Private: []string{"/tmp"}},
			want: append(append([]mountOp{}, base...), mountOp{Kind: mScratch, Target: "/tmp/s"}, mountOp{Kind: mReach, Target: "/tmp/tools/bin"}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planMounts(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("planMounts =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

func TestReachDirs(t *testing.T) {
	never := []string{"/home", "/root", "/home/runner", "/home/runner/actions-runner"}
	tests := []struct {
		kind        reachKind
		p, resolved string
		want        []string
	}{
		// npm's link to the launcher: the whole node_modules (the platform package is beside it),
		// and the directory of the link.
		{reachProgram, "/opt/x/bin/codex", "/opt/x/lib/node_modules/@openai/codex/bin/codex.js", []string{"/opt/x/lib/node_modules", "/opt/x/bin"}},
		{reachProgram, "/home/runner/.tools/node_modules/.bin/codex", "/home/runner/.tools/node_modules/@openai/codex/bin/codex.js", []string{"/home/runner/.tools/node_modules"}},
		// Outside the hidden places a bin directory brings its installation.
		{reachToolDir, "/opt/go/bin", "/opt/go/bin", []string{"/opt/go"}},
		{reachProgram, "/opt/go/bin/go", "/opt/go/bin/go", []string{"/opt/go"}},
		{reachToolDir, "/tmp/tools", "/tmp/tools", []string{"/tmp/tools"}},
		// Under a home, a bin directory is bound itself: never a home's dot-folder beside it, nor
		// the home's own folder.
		{reachToolDir, "/root/.cargo/bin", "/root/.cargo/bin", []string{"/root/.cargo/bin"}},
		{reachToolDir, "/home/runner/.local/bin", "/home/runner/.local/bin", []string{"/home/runner/.local/bin"}},
		{reachToolDir, "/root/go/bin", "/root/go/bin", []string{"/root/go/bin"}},
		{reachToolDir, "/home/runner/bin", "/home/runner/bin", []string{"/home/runner/bin"}},
		{reachProgram, "/root/bin/tool", "/root/bin/tool", []string{"/root/bin"}},
		{reachToolDir, "/root/.pyenv/shims", "/root/.pyenv/shims", []string{"/root/.pyenv/shims"}},
		// A link of a tool directory under a home: its target's directory and its own.
		{reachProgram, "/home/runner/.local/bin/black", "/home/runner/.local/share/pipx/venvs/black/bin/black", []string{"/home/runner/.local/share/pipx/venvs/black/bin", "/home/runner/.local/bin"}},
		// A tool cache's installation under the runner's folders or a home is one.
		{reachToolDir, "/home/runner/actions-runner/_work/_tool/go/1.22.0/x64/bin", "/home/runner/actions-runner/_work/_tool/go/1.22.0/x64/bin", []string{"/home/runner/actions-runner/_work/_tool/go/1.22.0/x64"}},
		{reachToolDir, "/home/runner/tools/go/bin", "/home/runner/tools/go/bin", []string{"/home/runner/tools/go"}},
		// A variable's folder under a home: a toolchain's is bound, a configuration folder never.
		{reachInstall, "/home/runner/.rustup", "/home/runner/.rustup", []string{"/home/runner/.rustup"}},
		{reachOther, "/home/runner/.config", "/home/runner/.config", nil},
		{reachOther, "/home/runner/.cargo", "/home/runner/.cargo", nil},
		{reachOther, "/home/runner/godot", "/home/runner/godot", nil},
		{reachOther, "/home/runner/actions-runner/_work/_tool/godot/4.3", "/home/runner/actions-runner/_work/_tool/godot/4.3", []string{"/home/runner/actions-runner/_work/_tool/godot/4.3"}},
		{reachOther, "/opt/sdk", "/opt/sdk", []string{"/opt/sdk"}},
		// A home, or a place that holds one, is never bound.
		{reachToolDir, "/home/runner", "/home/runner", nil},
		{reachInstall, "/home", "/home", nil},
		{reachProgram, "/home/runner/tool", "/home/runner/tool", nil},
	}
	for _, tt := range tests {
		if got := reachDirs(tt.kind, tt.p, tt.resolved, never); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("reachDirs(%d, %s -> %s) = %v, want %v", tt.kind, tt.p, tt.resolved, got, tt.want)
		}
	}
}

func TestConfineEnv(t *testing.T) {
	never := []string{"/home", "/home/runner"}
	bound := []string{"/home/runner/.cargo/bin", "/home/runner/.rustup", "/tmp/call"}
	resolve := func(p string) string {
		if p == "/opt/linked-config" {
			return "/home/runner/.config"
		}
		return p
	}
	env := []string{
		"HOME=/tmp/call/home", "PATH=/home/runner/.cargo/bin:/usr/bin", "TMPDIR=/tmp",
		"XDG_CONFIG_HOME=/home/runner/.config", "XDG_CACHE_HOME=/home/runner/.cache", "XDG_RUNTIME_DIR=/run/user/1001",
		"CARGO_HOME=/home/runner/.cargo", "RUSTUP_HOME=/home/runner/.rustup", "GNUPGHOME=/opt/linked-config",
		"JAVA_HOME=/usr/lib/jvm/17", "LANG=C.UTF-8", "XDG_DATA_DIRS=/home/runner/.local/share:/usr/share",
	}
	want := []string{
		"HOME=/tmp/call/home", "PATH=/home/runner/.cargo/bin:/usr/bin", "TMPDIR=/tmp",
		"XDG_CONFIG_HOME=/tmp/call/home/.config", "XDG_CACHE_HOME=/tmp/call/home/.cache", "XDG_RUNTIME_DIR=/run/user/1001",
		"RUSTUP_HOME=/home/runner/.rustup",
		"JAVA_HOME=/usr/lib/jvm/17", "LANG=C.UTF-8", "XDG_DATA_DIRS=/home/runner/.local/share:/usr/share",
	}
	if got := confineEnv(env, never, bound, resolve); !reflect.DeepEqual(got, want) {
		t.Errorf("confineEnv =\n%q\nwant\n%q", got, want)
	}
}
