package actiontest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository, from this package's folder.
const root = "../.."

func absRoot(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// baseEnv is the test process's environment without anything a runner or the action sets, so
// the scripts see only what each test gives them (Go's own settings stay, for source builds).
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GITHUB_") || strings.HasPrefix(name, "RUNNER_") || strings.HasPrefix(name, "STUDIO_") ||
			strings.HasPrefix(name, "INPUT_") || name == "PATH" {
			continue
		}
		env = append(env, kv)
	}
	return env
}
