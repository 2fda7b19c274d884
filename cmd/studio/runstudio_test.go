package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// studioBin builds the real binary once, beside the fake codex (TestMain removes that directory),
// for the tests that need a process of their own.
var studioBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(fakeCodexBin), "studio")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/codex-studio/studio-action/cmd/studio").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build studio: %w\n%s", err, out)
	}
	return bin, nil
})

// runStudio runs the built binary with exactly env (nothing of the test's own environment).
func runStudio(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin, err := studioBin()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), bin, args...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}
