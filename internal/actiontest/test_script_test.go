package actiontest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A failing step of scripts/test (here `go test`) does not stop the steps after it: the fuzz
// targets and the benchmark still run, and the script then fails, naming what failed.
func TestTestScriptRunsEveryStepAndFailsAtTheEnd(t *testing.T) {
	repo := t.TempDir()
	log := filepath.Join(repo, "log")
	bin := filepath.Join(repo, "bin")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile(filepath.Join(absRoot(t), "scripts", "test"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(repo, "scripts", "test"), string(script))
	for _, step := range []string{"install-codex", "fuzz", "bench"} {
		write(filepath.Join(repo, "scripts", step), "#!/bin/sh\necho "+step+" >>"+log+"\n")
	}
	// The tools the script would otherwise install, present; go fails its tests.
	for _, tool := range []string{"git", "npm", "crontab", "curl", "sudo"} {
		write(filepath.Join(bin, tool), "#!/bin/sh\nexit 0\n")
	}
	write(filepath.Join(bin, "go"), "#!/bin/sh\necho \"go $1\" >>"+log+"\n[ \"$1\" = test ] && exit 1\nexit 0\n")

	cmd := exec.Command(filepath.Join(repo, "scripts", "test"))
	cmd.Env = append(baseEnv(), "PATH="+bin+":/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("scripts/test succeeded with a failing go test:\n%s", out)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(data)), []string{"install-codex", "go", "vet", "go", "test", "fuzz", "bench"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("steps run: %q, want %q\n%s", got, want, out)
	}
	if !strings.Contains(string(out), "failed: go test") {
		t.Errorf("the output does not name the failed step:\n%s", out)
	}
}
