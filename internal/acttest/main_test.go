//go:build linux

package acttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// actVersion is the nektos/act release the tests run the action with.
const actVersion = "v0.2.89"

// root is the repository, from this package's folder.
const root = "../.."

// Built once per test process by TestMain.
var (
	actBin string
	// fakeCodexBin is the scripted stand-in for the Codex CLI, in a folder any user can read: the
	// studio runs it as the agent's uid.
	fakeCodexBin string
	// release is what a release of v1.2.3 publishes for this machine's platform, built by
	// scripts/build-release: the asset's name and bytes, and checksums.txt.
	release struct {
		asset     string
		binary    []byte
		checksums []byte
	}
)

const releaseTag = "v1.2.3"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if actBin, err = buildAct(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "studio-acttest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fakeCodexBin = filepath.Join(tmp, "codex")
	if out, err := exec.Command("go", "build", "-o", fakeCodexBin, "github.com/codex-studio/studio-action/internal/fakecodex/cmd/codex").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the fake codex: %v\n%s", err, out)
		return 1
	}
	// The release is built first, with the flags of a source build (CGO_ENABLED=0, -trimpath), so
	// the action's own source build under act finds the packages compiled and only links.
	if err := buildRelease(filepath.Join(tmp, "dist")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// buildAct installs act's pinned version into the user's cache directory, keyed by version, and
// reuses it while it answers --version as that version. `go install module@version` builds it
// with act's own go.mod, so none of its dependencies enter the project's module.
func buildAct() (string, error) {
	dirs := []string{filepath.Join(os.TempDir(), "codex-studio-acttest")}
	if cache, err := os.UserCacheDir(); err == nil {
		dirs = append([]string{filepath.Join(cache, "codex-studio", "acttest")}, dirs...)
	}
	want := "act version " + strings.TrimPrefix(actVersion, "v")
	var dir string
	for _, d := range dirs {
		d = filepath.Join(d, "act-"+actVersion)
		if out, err := exec.Command(filepath.Join(d, "act"), "--version").Output(); err == nil && strings.TrimSpace(string(out)) == want {
			return filepath.Join(d, "act"), nil
		}
		// A home that cannot be written falls back to the temporary folder.
		if err := os.MkdirAll(d, 0o755); err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		return "", fmt.Errorf("no folder to build act in: %v", dirs)
	}
	// Into a folder of its own, then renamed: two test processes building at once never run a
	// half-written binary.
	gobin, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("act cache: %w", err)
	}
	defer os.RemoveAll(gobin)
	start := time.Now()
	cmd := exec.Command("go", "install", "github.com/nektos/act@"+actVersion)
	cmd.Dir = gobin // outside any module
	// -mod=mod overrides a -mod=vendor or readonly in the environment's GOFLAGS, which a
	// module@version install refuses.
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install github.com/nektos/act@%s: %w\n%s", actVersion, err, out)
	}
	bin := filepath.Join(dir, "act")
	if err := os.Rename(filepath.Join(gobin, "act"), bin); err != nil {
		return "", fmt.Errorf("act cache: %w", err)
	}
	fmt.Fprintf(os.Stderr, "acttest: built act %s into %s in %s\n", actVersion, dir, time.Since(start).Round(time.Second))
	return bin, nil
}

// buildRelease runs the release script for this platform, as the release workflow does.
func buildRelease(dist string) error {
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "build-release"), releaseTag, dist)
	cmd.Env = append(os.Environ(), "PLATFORMS=linux/"+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/build-release: %w\n%s", err, out)
	}
	release.asset = "studio-linux-" + runtime.GOARCH
	var err error
	if release.binary, err = os.ReadFile(filepath.Join(dist, release.asset)); err != nil {
		return fmt.Errorf("release asset: %w", err)
	}
	if release.checksums, err = os.ReadFile(filepath.Join(dist, "checksums.txt")); err != nil {
		return fmt.Errorf("release checksums: %w", err)
	}
	return nil
}
