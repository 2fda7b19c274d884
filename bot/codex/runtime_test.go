package codex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveBin(t *testing.T) {
	tests := []struct {
		name, explicit, env, want string
	}{
		{"explicit wins", " /opt/codex ", "/env/codex", "/opt/codex"},
		{"CODEX_BIN trimmed", "", "  /env/codex\n", "/env/codex"},
		{"default", "", "", "codex"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "CODEX_BIN" {
					return tc.env
				}
				// The legacy variable is ignored (seed §9.1).
				if k == "OPEN_GAMESTUDIO_CODEX_BIN" {
					return "/legacy/codex"
				}
				return ""
			}
			if got := ResolveBin(tc.explicit, getenv); got != tc.want {
				t.Errorf("ResolveBin = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, bin, want, wantErr string
	}{
		{"reports the version", script(t, dir, "ok", "echo 'codex-cli 0.171.0'"), "codex-cli 0.171.0", ""},
		{"non-zero exit", script(t, dir, "bad", "exit 4"), "", "Codex CLI exited with status 4"},
		{"missing", filepath.Join(dir, "nope"), "", "Codex CLI unavailable or not found: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Available(context.Background(), tc.bin)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want prefix %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Available = %q, %v", got, err)
			}
		})
	}
}

func TestStartWiresProxyIntoTheRunner(t *testing.T) {
	env := map[string]string{"PATH": "/usr/bin", "GITHUB_TOKEN": "ghs_wiring_canary", "CODEX_BIN": "/env/codex"}
	rt, err := Start(context.Background(), Config{
		OpenAIKey: "sk-wiring-canary", Upstream: "http://127.0.0.1:9/v1", Secrets: []string{"ghs_wiring_canary"},
		Getenv: func(k string) string { return env[k] },
	})
	if err != nil {
		t.Fatal(err)
	}
	home := rt.CLI.CodexHome
	if rt.CLI.Bin != "/env/codex" || rt.CLI.Provider == nil || rt.CLI.Provider.BaseURL != rt.Proxy.BaseURL() {
		t.Errorf("CLI = %+v", rt.CLI)
	}
	joined := strings.Join(rt.CLI.Env, "\n")
	if strings.Contains(joined, "sk-wiring-canary") || strings.Contains(joined, "ghs_wiring_canary") ||
		strings.Contains(joined, ProxyKeyEnv) || rt.CLI.Keys == nil {
		// The key is the call's own (CLI.Keys), set when the call starts.
		t.Errorf("Codex env = %q", rt.CLI.Env)
	}
	if got := rt.Redactor.Redact("a sk-wiring-canary b ghs_wiring_canary c " + rt.Proxy.ClientKey()); got != "a *** b *** c ***" {
		t.Errorf("redactor = %q", got)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("temporary CODEX_HOME %s not removed: %v", home, err)
	}
}
