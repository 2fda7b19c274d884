//go:build linux

package acttest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/sandbox"
)

// A `/studio run` comment, with the action at a branch (no release): act runs action.yml from
// the checkout, install-studio builds the studio from that source, and the run lands on GitHub.
// A second event on the same runner reuses the build instead of building again.
func TestActRunsTheActionBuiltFromSource(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main")
	w.script()

	first, payload := w.issue("Make the jump snappier")
	res := w.act(payload)
	w.assertDone(res, first)
	if !strings.Contains(res.log, "go build -trimpath ./cmd/studio") || !strings.Contains(res.log, "built from source at ref 'main'") {
		t.Errorf("the first run did not build the studio from source:\n%s", res.log)
	}
	if got := w.downloads(); len(got) != 0 {
		t.Errorf("a branch looked for a release: %v", got)
	}

	second, payload := w.issue("Make the fall slower")
	res = w.act(payload)
	w.assertDone(res, second)
	if strings.Contains(res.log, "go build") || !strings.Contains(res.log, "source build of ref 'main' reused from "+filepath.Join(w.cacheDir, "tool_cache", "codex-studio", "source")) {
		t.Errorf("the second run did not reuse the first one's build from the tool cache:\n%s", res.log)
	}
}

// A release tag: the asset and checksums.txt scripts/build-release made are downloaded from
// GITHUB_SERVER_URL, verified and run; nothing is built.
func TestActInstallsTheReleaseItVerified(t *testing.T) {
	t.Parallel()
	w := newWorld(t, releaseTag)
	w.publish(releaseTag, map[string][]byte{release.asset: release.binary, "checksums.txt": release.checksums})
	w.script()

	n, payload := w.issue("Make the jump snappier")
	res := w.act(payload)
	w.assertDone(res, n)
	prefix := "/" + actionRepo + "/releases/download/" + releaseTag + "/"
	if got, want := w.downloads(), []string{prefix + "checksums.txt", prefix + release.asset}; !slices.Equal(got, want) {
		t.Errorf("downloads %v, want %v", got, want)
	}
	if !strings.Contains(res.log, "(release "+releaseTag+", sha256 ") || strings.Contains(res.log, "go build") {
		t.Errorf("the log does not show the verified release (or shows a build):\n%s", res.log)
	}
}

// A release whose asset does not match checksums.txt: the install step fails, the binary never
// runs, no source build replaces it, and the issue gets a comment naming the checksum problem
// and its fix, posted with the job's token.
func TestActRefusesATamperedReleaseAndSaysSoOnTheIssue(t *testing.T) {
	t.Parallel()
	w := newWorld(t, releaseTag)
	ran := filepath.Join(w.base, "tampered-binary-ran")
	tampered := []byte("#!/bin/sh\ntouch " + ran + "\necho 'studio " + releaseTag + "'\n")
	w.publish(releaseTag, map[string][]byte{release.asset: tampered, "checksums.txt": release.checksums})

	n, payload := w.issue("Make the jump snappier")
	res := w.act(payload)
	if res.err == nil {
		t.Fatalf("act succeeded with a tampered release:\n%s", res.log)
	}
	if _, err := os.Stat(ran); !os.IsNotExist(err) {
		t.Errorf("the tampered binary ran (%v)", err)
	}
	if !strings.Contains(res.log, "checksum mismatch for "+release.asset) || strings.Contains(res.log, "go build") {
		t.Errorf("the log does not show the refused checksum (or shows a source build):\n%s", res.log)
	}
	if len(w.codex.Invocations()) != 0 {
		t.Errorf("Codex ran: %d calls", len(w.codex.Invocations()))
	}
	comments := w.botComments(n)
	if len(comments) != 1 {
		t.Fatalf("bot comments on #%d: %q, want the one failure report\n%s", n, comments, res.log)
	}
	for _, want := range []string{"<!-- studio:install-failure -->", "does not match the release's checksum", "neither installed nor run",
		"Pin another release", "checksum mismatch for " + release.asset + " of release " + releaseTag, "/acme/hop/actions/runs/" + sandbox.RunID} {
		if !strings.Contains(comments[0], want) {
			t.Errorf("the failure report lacks %q:\n%s", want, comments[0])
		}
	}
	if strings.Contains(comments[0], "<!-- studio:handled") {
		t.Errorf("the studio itself ran:\n%s", comments[0])
	}
	if strings.Contains(res.log, w.sw.Token) || strings.Contains(res.log, sandbox.OpenAIKey) {
		t.Errorf("a secret is in the job's log")
	}
}

// A branch on a runner without Go: the install fails, and the issue says to pin a release or set
// up Go, instead of staying silent.
func TestActWithoutGoSaysOnTheIssueWhatToDo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main")
	w.withoutGo()

	n, payload := w.issue("Make the jump snappier")
	res := w.act(payload)
	if res.err == nil {
		t.Fatalf("act succeeded without Go:\n%s", res.log)
	}
	if !strings.Contains(res.log, "no Go toolchain on PATH") {
		t.Errorf("the log does not name the missing Go:\n%s", res.log)
	}
	comments := w.botComments(n)
	if len(comments) != 1 {
		t.Fatalf("bot comments on #%d: %q, want the one failure report\n%s", n, comments, res.log)
	}
	for _, want := range []string{"has no release, and the runner has no Go to build it", "`uses: codex-studio/studio-action@v1`", "`actions/setup-go`"} {
		if !strings.Contains(comments[0], want) {
			t.Errorf("the failure report lacks %q:\n%s", want, comments[0])
		}
	}
}

// On a runner user with passwordless sudo (GitHub's hosted runners), run-studio runs the studio
// through the real sudo as root, so the agent is confined, and hands what root left in
// RUNNER_TEMP back to the runner user.
// The test user's cache is private (XDG_CACHE_HOME in a 0700 folder, as a clone in `mktemp -d`
// has it): the runner user makes its own.
func TestActRunsTheStudioThroughRealSudo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, releaseTag)
	w.hostEnv = append(w.hostEnv, "XDG_CACHE_HOME="+privateDir(t))
	w.runAsRunner()
	w.publish(releaseTag, map[string][]byte{release.asset: release.binary, "checksums.txt": release.checksums})
	w.script()

	n, payload := w.issue("Make the jump snappier")
	res := w.act(payload)
	w.assertDone(res, n)
	if want := w.runAs.uid(); res.runnerUID != want {
		t.Fatalf("the workflow's steps ran as uid %q, want the runner user's %s\n%s", res.runnerUID, want, res.log)
	}
	if strings.Contains(res.log, "no passwordless sudo") || strings.Contains(res.log, "unconfined") {
		t.Errorf("run-studio did not go through sudo:\n%s", res.log)
	}
	if status := w.botComments(n); len(status) == 1 && strings.Contains(status[0], "Unconfined") {
		t.Errorf("the studio did not run as root (the agent is unconfined):\n%s", status[0])
	}
	if res.notTheRunners != "" {
		t.Errorf("files in RUNNER_TEMP left to root:\n%s", res.notTheRunners)
	}
	if res.workspaceNotTheRunners != "" {
		t.Errorf("folders in the workspace left to root, which the next job's checkout could not clean:\n%s", res.workspaceNotTheRunners)
	}
}

// The runner user is given no path under the checkout (a clone in a 0700 folder, or a root
// home, which it cannot read) and none under the test user's private cache.
func TestTheRunnerUserIsGivenNothingOfTheTestUsersFolders(t *testing.T) {
	t.Parallel()
	w := newWorld(t, releaseTag)
	private := privateDir(t)
	w.hostEnv = append(w.hostEnv, "XDG_CACHE_HOME="+private, "GOCACHE="+filepath.Join(private, "go-build"))
	w.runAsRunner()
	if err := os.WriteFile(filepath.Join(w.base, "secrets"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := w.actCommand(context.Background(), filepath.Join(w.base, "event.json"), filepath.Join(w.base, "secrets"))
	checkout := absRoot(t) + string(filepath.Separator)
	for _, s := range append(cmd.Args, cmd.Env...) {
		if strings.Contains(s, checkout) || strings.Contains(s, "="+strings.TrimSuffix(checkout, "/")) {
			t.Errorf("act as the runner user is given a path in the checkout: %q", s)
		}
		if strings.Contains(s, private) {
			t.Errorf("act as the runner user is given the test user's private cache: %q", s)
		}
	}
}

// privateDir is a folder only the test user can enter.
func privateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
