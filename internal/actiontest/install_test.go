package actiontest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// releaseServer serves release assets at /<tag>/<name> on 127.0.0.1 (404 for anything else) and
// records the paths asked for.
type releaseServer struct {
	*httptest.Server
	mu     sync.Mutex
	files  map[string][]byte
	served []string
}

func newReleaseServer(t *testing.T, files map[string][]byte) *releaseServer {
	s := &releaseServer{files: files}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.served = append(s.served, r.URL.Path)
		body, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *releaseServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.served)
}

// fakeAsset is a "binary" for the release: a script that answers `version` like the studio.
func fakeAsset(tag string) []byte {
	return []byte("#!/bin/sh\n[ \"$1\" = version ] && echo 'studio " + tag + "'\n")
}

func checksums(entries map[string][]byte) []byte {
	var b strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range entries {
			if !yield(k) {
				return
			}
		}
	}) {
		sum := sha256.Sum256(entries[name])
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	return []byte(b.String())
}

// writeScript writes an executable shell script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/usr/bin/env bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// fakeUname is a bin folder whose uname says Linux x86_64, for a runner without RUNNER_OS and
// RUNNER_ARCH.
func fakeUname(t *testing.T) string {
	dir := t.TempDir()
	writeScript(t, filepath.Join(dir, "uname"), `case "$1" in -s) echo Linux ;; -m) echo x86_64 ;; *) echo Linux ;; esac`+"\n")
	return dir
}

type installResult struct {
	stdout, stderr string
	err            error
	output         string // what the script wrote to GITHUB_OUTPUT
}

func runInstall(t *testing.T, path string, env ...string) installResult {
	t.Helper()
	return runInstallArgs(t, nil, path, env...)
}

func runInstallArgs(t *testing.T, args []string, path string, env ...string) installResult {
	t.Helper()
	out := filepath.Join(t.TempDir(), "github_output")
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", "install-studio")}, args...)...)
	cmd.Env = append(baseEnv(), append([]string{"PATH=" + path, "GITHUB_OUTPUT=" + out, "RUNNER_TEMP=" + t.TempDir()}, env...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o, _ := os.ReadFile(out)
	return installResult{stdout.String(), stderr.String(), err, string(o)}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestInstallStudioVerifiesAndInstallsTheRelease(t *testing.T) {
	asset := fakeAsset("v1.2.3")
	srv := newReleaseServer(t, map[string][]byte{
		"/v1.2.3/studio-linux-amd64": asset,
		"/v1.2.3/checksums.txt":      checksums(map[string][]byte{"studio-linux-amd64": asset, "studio-linux-arm64": []byte("other")}),
	})
	dir := filepath.Join(t.TempDir(), "tool-cache")
	path := fakeUname(t) + ":" + os.Getenv("PATH")
	env := []string{"STUDIO_REF=v1.2.3", "STUDIO_REPOSITORY=codex-studio/studio-action", "STUDIO_RELEASE_BASE_URL=" + srv.URL, "STUDIO_INSTALL_DIR=" + dir}

	r := runInstall(t, path, env...)
	if r.err != nil {
		t.Fatalf("install-studio: %v\n%s", r.err, r.stderr)
	}
	bin := filepath.Join(dir, "studio")
	if got := lastLine(r.stdout); got != bin {
		t.Errorf("printed %q, want the binary %s", got, bin)
	}
	if !strings.Contains(r.output, "bin="+bin+"\n") {
		t.Errorf("GITHUB_OUTPUT %q lacks bin=%s", r.output, bin)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || strings.TrimSpace(string(out)) != "studio v1.2.3" {
		t.Errorf("installed binary: %q, %v", out, err)
	}
	if got, want := srv.requests(), []string{"/v1.2.3/checksums.txt", "/v1.2.3/studio-linux-amd64"}; !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	if strings.Contains(r.stderr, "go build") {
		t.Errorf("built from source although the release has the asset:\n%s", r.stderr)
	}

	// A second job on the same runner finds the verified binary in the cache.
	r = runInstall(t, path, env...)
	if r.err != nil || lastLine(r.stdout) != bin {
		t.Fatalf("second install: %v %q\n%s", r.err, r.stdout, r.stderr)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("the cached binary was downloaded again (%d requests)", n)
	}
}

// A major tag (v1) is resolved through the action's VERSION file; the platform comes from
// RUNNER_OS and RUNNER_ARCH when the runner sets them.
func TestInstallStudioResolvesTheMajorTagThroughVERSION(t *testing.T) {
	action := t.TempDir()
	if err := os.WriteFile(filepath.Join(action, "VERSION"), []byte("1.4.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asset := fakeAsset("v1.4.2")
	srv := newReleaseServer(t, map[string][]byte{
		"/v1.4.2/studio-linux-arm64": asset,
		"/v1.4.2/checksums.txt":      checksums(map[string][]byte{"studio-linux-arm64": asset}),
	})
	r := runInstall(t, os.Getenv("PATH"), "STUDIO_REF=v1", "STUDIO_ACTION_PATH="+action, "RUNNER_OS=Linux", "RUNNER_ARCH=ARM64",
		"STUDIO_RELEASE_BASE_URL="+srv.URL, "STUDIO_INSTALL_DIR="+t.TempDir())
	// The fake asset is a script, so it runs on any machine: the arm64 choice shows in the URL.
	if r.err != nil {
		t.Fatalf("install-studio: %v\n%s", r.err, r.stderr)
	}
	if got := srv.requests(); !slices.Contains(got, "/v1.4.2/studio-linux-arm64") {
		t.Errorf("requests %v, want the v1.4.2 linux-arm64 asset", got)
	}
}

// A release whose checksum does not match fails, installs nothing and does not fall back to
// building from source (that would let a tampered release pass silently).
func TestInstallStudioRefusesABadChecksum(t *testing.T) {
	asset := fakeAsset("v1.2.3")
	for name, sums := range map[string]struct {
		sums       []byte
		want, kind string
	}{
		"mismatch": {checksums(map[string][]byte{"studio-linux-amd64": []byte("the binary that was released")}), "checksum mismatch", "checksum-mismatch"},
		"unlisted": {checksums(map[string][]byte{"studio-linux-arm64": asset}), "lists no studio-linux-amd64", "checksum-unlisted"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newReleaseServer(t, map[string][]byte{"/v1.2.3/studio-linux-amd64": asset, "/v1.2.3/checksums.txt": sums.sums})
			dir := filepath.Join(t.TempDir(), "install")
			r := runInstall(t, fakeUname(t)+":"+os.Getenv("PATH"), "STUDIO_REF=v1.2.3",
				"STUDIO_RELEASE_BASE_URL="+srv.URL, "STUDIO_INSTALL_DIR="+dir)
			if r.err == nil {
				t.Fatalf("install-studio succeeded with a bad checksum file:\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, sums.want) {
				t.Errorf("stderr does not say %q:\n%s", sums.want, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "studio")); !os.IsNotExist(err) {
				t.Errorf("something was installed: %v", err)
			}
			if strings.Contains(r.stderr, "go build") || strings.Contains(r.output, "bin=") {
				t.Errorf("fell back to a source build or reported a binary:\n%s\n%s", r.stderr, r.output)
			}
			// What report-install-failure puts on the issue.
			if !strings.Contains(r.output, "failure="+sums.kind+"\n") || !regexp.MustCompile(`(?m)^failure-message=.*`+regexp.QuoteMeta(sums.want)).MatchString(r.output) {
				t.Errorf("GITHUB_OUTPUT %q lacks failure=%s and its message", r.output, sums.kind)
			}
		})
	}
}

// No release for the ref (a 404 on the asset): the studio is built from the action's source
// with the job's Go, reports the ref it was built from, and is kept in the tool cache, where
// the next job on the runner finds it instead of building again.
func TestInstallStudioBuildsFromSourceWithoutARelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the studio")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	srv := newReleaseServer(t, map[string][]byte{}) // every request is a 404
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	toolCache := t.TempDir()
	path := fakeUname(t) + ":" + filepath.Dir(goBin) + ":" + os.Getenv("PATH")
	env := []string{"STUDIO_REF=v9.9.9", "STUDIO_ACTION_PATH=" + abs, "STUDIO_RELEASE_BASE_URL=" + srv.URL, "RUNNER_TOOL_CACHE=" + toolCache}
	r := runInstall(t, path, env...)
	if r.err != nil {
		t.Fatalf("install-studio: %v\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.stderr, "404") || !strings.Contains(r.stderr, "go build") {
		t.Errorf("stderr does not tell the 404 and the source build:\n%s", r.stderr)
	}
	if !strings.Contains(r.output, "source-build=built\n") {
		t.Errorf("GITHUB_OUTPUT %q lacks source-build=built (action.yml saves the build on it)", r.output)
	}
	bin := lastLine(r.stdout)
	if !strings.HasPrefix(bin, filepath.Join(toolCache, "codex-studio", "source", "v9.9.9-")+"") || filepath.Base(bin) != "studio" {
		t.Errorf("built %q, want it under the tool cache's codex-studio/source/v9.9.9-<key>", bin)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "studio v9.9.9-source" {
		t.Errorf("built binary: %q, %v", out, err)
	}

	// The next job: the same source, the same Go, the same ref.
	r = runInstall(t, path, env...)
	if r.err != nil {
		t.Fatalf("second install: %v\n%s", r.err, r.stderr)
	}
	if strings.Contains(r.stderr, "go build") || !strings.Contains(r.stderr, "reused") || lastLine(r.stdout) != bin ||
		!strings.Contains(r.output, "source-build=reused\n") {
		t.Errorf("the second job built again (or elsewhere), want the first build reused:\n%s%s", r.stderr, r.stdout)
	}
	// A binary changed since it was kept is not trusted: built again.
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho studio v9.9.9-source\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r = runInstall(t, path, env...); r.err != nil || !strings.Contains(r.stderr, "go build") {
		t.Errorf("a changed cached binary was reused: %v\n%s", r.err, r.stderr)
	}
}

// The key of a source build names what went into it: the action's files (not .git, nor the
// .tools folder where run-studio installs Codex), the ref and the Go. A ref with a release has no
// source build to cache.
func TestInstallStudioSourceCacheKeyFollowsTheSource(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH: the source build needs it")
	}
	action := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":               "module example.com/studio\n\ngo 1.21\n",
		"cmd/studio/main.go":   "package main\n\nfunc main() {}\n",
		"prompts/implement.md": "Implement the task.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(action, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(action, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	toolCache := t.TempDir()
	key := func(ref string) (string, string) {
		t.Helper()
		r := runInstallArgs(t, []string{"--source-cache-key"}, fakeUname(t)+":"+os.Getenv("PATH"),
			"STUDIO_REF="+ref, "STUDIO_ACTION_PATH="+action, "RUNNER_TOOL_CACHE="+toolCache)
		if r.err != nil {
			t.Fatalf("--source-cache-key: %v\n%s", r.err, r.stderr)
		}
		var k, d string
		for _, line := range strings.Split(r.output, "\n") {
			if v, ok := strings.CutPrefix(line, "key="); ok {
				k = v
			}
			if v, ok := strings.CutPrefix(line, "dir="); ok {
				d = v
			}
		}
		return k, d
	}
	first, dir := key("main")
	if !regexp.MustCompile(`^codex-studio-source-main-[0-9a-f]{16}-go[0-9.]+[^-]*-linux-amd64$`).MatchString(first) {
		t.Fatalf("key %q", first)
	}
	if want := filepath.Join(toolCache, "codex-studio", "source", strings.TrimPrefix(first, "codex-studio-source-")); dir != want {
		t.Errorf("dir %q, want %q", dir, want)
	}
	for _, d := range []string{".tools/codex", ".git"} {
		if err := os.MkdirAll(filepath.Join(action, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(action, d, "x"), []byte("installed later"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if k, _ := key("main"); k != first {
		t.Errorf("key changed to %q by .tools or .git", k)
	}
	if k, _ := key("feature/x"); k == first || !strings.HasPrefix(k, "codex-studio-source-feature-x-") {
		t.Errorf("another ref: key %q", k)
	}
	if err := os.WriteFile(filepath.Join(action, "prompts", "implement.md"), []byte("Implement it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if k, _ := key("main"); k == first {
		t.Errorf("an embedded file changed and the key did not: %q", k)
	}
	if k, _ := key("v1.2.3"); k != "" {
		t.Errorf("a release tag got a source cache key %q", k)
	}
}

func TestInstallStudioWithoutAReleaseOrGoSaysWhatToDo(t *testing.T) {
	// bash, coreutils and curl, but no go: the system folders, unless Go lives there too.
	path := fakeUname(t) + ":/usr/bin:/bin"
	if _, err := exec.LookPath("go"); err == nil {
		for _, d := range []string{"/usr/bin", "/bin"} {
			if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
				t.Skip("go is installed in " + d)
			}
		}
	}
	r := runInstall(t, path, "STUDIO_REF=main", "STUDIO_INSTALL_DIR="+t.TempDir())
	if r.err == nil || !strings.Contains(r.stderr, "no Go toolchain") || !strings.Contains(r.stderr, "setup-go") {
		t.Errorf("want a failure naming the missing Go and setup-go, got %v:\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.output, "failure=no-go\n") {
		t.Errorf("GITHUB_OUTPUT %q lacks failure=no-go", r.output)
	}
	// The Actions cache step finds nothing to key without Go, and leaves the failing to install.
	k := runInstallArgs(t, []string{"--source-cache-key"}, path, "STUDIO_REF=main")
	if k.err != nil || k.output != "" {
		t.Errorf("--source-cache-key without Go: %v, outputs %q\n%s", k.err, k.output, k.stderr)
	}
}

// A version tag whose release has no assets yet (its workflow still uploading, or it failed) on a
// runner without Go: the user did pin a release, so the failure says the release has no assets,
// not "pin a release".
func TestInstallStudioNamesAReleaseWithoutAssets(t *testing.T) {
	path := fakeUname(t) + ":/usr/bin:/bin"
	if _, err := exec.LookPath("go"); err == nil {
		for _, d := range []string{"/usr/bin", "/bin"} {
			if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
				t.Skip("go is installed in " + d)
			}
		}
	}
	srv := newReleaseServer(t, map[string][]byte{}) // every request is a 404
	r := runInstall(t, path, "STUDIO_REF=v9.9.9", "STUDIO_RELEASE_BASE_URL="+srv.URL, "STUDIO_INSTALL_DIR="+t.TempDir())
	if r.err == nil || !strings.Contains(r.stderr, "release v9.9.9 has no studio-linux-amd64 or checksums.txt yet") || strings.Contains(r.stderr, "Pin the action to a release tag") {
		t.Errorf("want a failure naming the release without assets, got %v:\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.output, "failure=no-release-assets\n") {
		t.Errorf("GITHUB_OUTPUT %q lacks failure=no-release-assets", r.output)
	}
}

func TestInstallStudioRefusesOtherPlatforms(t *testing.T) {
	for _, env := range [][]string{{"RUNNER_OS=Windows", "RUNNER_ARCH=X64"}, {"RUNNER_OS=Linux", "RUNNER_ARCH=ARM"}, {"RUNNER_OS=macOS", "RUNNER_ARCH=ARM"}} {
		r := runInstall(t, os.Getenv("PATH"), append(env, "STUDIO_REF=v1.2.3", "STUDIO_RELEASE_BASE_URL=http://127.0.0.1:1")...)
		if r.err == nil || !strings.Contains(r.stderr, "::error") {
			t.Errorf("%v: want a clear failure, got %v:\n%s", env, r.err, r.stderr)
		}
	}
}

// withoutCommand is a PATH with every program of path except name, as on a Mac, which has
// shasum but no sha256sum.
func withoutCommand(t *testing.T, path, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(path) {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			link := filepath.Join(dir, e.Name())
			if e.Name() == name || e.IsDir() {
				continue
			}
			if _, err := os.Lstat(link); err == nil {
				continue // an earlier PATH entry wins, as in a lookup
			}
			if err := os.Symlink(filepath.Join(d, e.Name()), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// macOS runners (x64 and arm64) get the darwin release asset, verified with shasum where
// sha256sum is missing.
func TestInstallStudioInstallsTheMacOSRelease(t *testing.T) {
	if _, err := exec.LookPath("shasum"); err != nil {
		t.Skip("shasum is not installed")
	}
	for _, c := range []struct{ runnerArch, asset string }{{"ARM64", "studio-darwin-arm64"}, {"X64", "studio-darwin-amd64"}} {
		t.Run(c.runnerArch, func(t *testing.T) {
			asset := fakeAsset("v1.2.3")
			srv := newReleaseServer(t, map[string][]byte{
				"/v1.2.3/" + c.asset:    asset,
				"/v1.2.3/checksums.txt": checksums(map[string][]byte{c.asset: asset, "studio-linux-amd64": []byte("linux")}),
			})
			dir := t.TempDir()
			path := withoutCommand(t, os.Getenv("PATH"), "sha256sum")
			r := runInstall(t, path, "STUDIO_REF=v1.2.3", "RUNNER_OS=macOS", "RUNNER_ARCH="+c.runnerArch,
				"STUDIO_RELEASE_BASE_URL="+srv.URL, "STUDIO_INSTALL_DIR="+dir)
			if r.err != nil {
				t.Fatalf("install-studio on macOS: %v\n%s", r.err, r.stderr)
			}
			if got := srv.requests(); !slices.Contains(got, "/v1.2.3/"+c.asset) {
				t.Errorf("requests %v, want the %s asset", got, c.asset)
			}
			if got := lastLine(r.stdout); got != filepath.Join(dir, "studio") {
				t.Errorf("printed %q, want the installed binary", got)
			}
		})
	}
	// Without shasum either, the download cannot be verified: a failure, never an unchecked binary.
	srv := newReleaseServer(t, map[string][]byte{"/v1.2.3/studio-darwin-arm64": fakeAsset("v1.2.3"), "/v1.2.3/checksums.txt": []byte("x  studio-darwin-arm64\n")})
	path := withoutCommand(t, withoutCommand(t, os.Getenv("PATH"), "sha256sum"), "shasum")
	r := runInstall(t, path, "STUDIO_REF=v1.2.3", "RUNNER_OS=macOS", "RUNNER_ARCH=ARM64", "STUDIO_RELEASE_BASE_URL="+srv.URL, "STUDIO_INSTALL_DIR="+t.TempDir())
	if r.err == nil || !strings.Contains(r.stderr, "neither sha256sum nor shasum") {
		t.Errorf("want a failure naming the missing checksum tools, got %v:\n%s", r.err, r.stderr)
	}
}
