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
	never := []string{"/home", "/root", "/home/runner"}
	tests := []struct {
		p, resolved string
		dir         bool
		want        []string
	}{
		// npm's link to the launcher: the whole node_modules (the platform package is beside it),
		// and the directory of the link.
		{"/opt/x/bin/codex", "/opt/x/lib/node_modules/@openai/codex/bin/codex.js", false, []string{"/opt/x/lib/node_modules", "/opt/x/bin"}},
		{"/home/runner/.tools/node_modules/.bin/codex", "/home/runner/.tools/node_modules/@openai/codex/bin/codex.js", false, []string{"/home/runner/.tools/node_modules"}},
		// A bin directory brings its installation; a home's own bin does not bring the home.
		{"/root/.cargo/bin", "/root/.cargo/bin", true, []string{"/root/.cargo"}},
		{"/home/runner/bin", "/home/runner/bin", true, []string{"/home/runner/bin"}},
		{"/root/bin/tool", "/root/bin/tool", false, []string{"/root/bin"}},
		{"/opt/go/bin/go", "/opt/go/bin/go", false, []string{"/opt/go"}},
		// A home, or a place that holds one, is never bound.
		{"/home/runner", "/home/runner", true, nil},
		{"/home", "/home", true, nil},
		{"/tmp/tools", "/tmp/tools", true, []string{"/tmp/tools"}},
	}
	for _, tt := range tests {
		if got := reachDirs(tt.p, tt.resolved, tt.dir, never); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("reachDirs(%s -> %s) = %v, want %v", tt.p, tt.resolved, got, tt.want)
		}
	}
}
