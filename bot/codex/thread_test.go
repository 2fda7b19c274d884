package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testThread = "01a24669-81d1-7ca3-b867-d8df4b436f12"

// The rollout is read back only as the real file Codex wrote: a sessions tree the agent turned
// into links (to a file of the studio's, say) is refused, and so is a rollout that is itself a
// link; the one real rollout is read, redacted, and placed again where thread/resume finds it.
func TestReadRolloutFollowsNoLink(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "studio-secret")
	if err := os.WriteFile(secret, []byte("ghs_canaryToken"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := "rollout-2026-12-05T14-21-04-" + testThread + ".jsonl"
	red := NewRedactor("ghs_canaryToken")
	write := func(home, rel, content string) {
		t.Helper()
		full := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, at string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		build func(home string)
		ok    bool
	}{
		{"the real rollout", func(home string) {
			write(home, "sessions/2026/12/05/"+name, `{"said":"ghs_canaryToken"}`+"\n")
		}, true},
		{"sessions is a link", func(home string) {
			other := t.TempDir()
			write(other, "2026/12/05/"+name, "{}\n")
			link(other, filepath.Join(home, "sessions"))
		}, false},
		{"a day folder is a link", func(home string) {
			other := t.TempDir()
			write(other, name, "{}\n")
			link(other, filepath.Join(home, "sessions/2026/12/05"))
		}, false},
		{"the rollout is a link to the studio's secret", func(home string) {
			link(secret, filepath.Join(home, "sessions/2026/12/05/"+name))
		}, false},
		{"a rollout the agent inflated past the bound", func(home string) {
			write(home, "sessions/2026/12/05/"+name, strings.Repeat("x", MaxRolloutBytes+1))
		}, false},
		{"two rollouts of the thread", func(home string) {
			write(home, "sessions/2026/12/05/"+name, "{}\n")
			write(home, "sessions/2026/12/06/rollout-2026-12-06T00-00-00-"+testThread+".jsonl", "{}\n")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			tc.build(home)
			th, err := readRollout(home, testThread, red)
			if !tc.ok {
				if err == nil || th != nil {
					t.Fatalf("read a rollout it must refuse: %+v", th)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if th.ID != testThread || th.Path != "sessions/2026/12/05/"+name || strings.Contains(string(th.Rollout), "ghs_canaryToken") {
				t.Fatalf("thread = %+v %q", th, th.Rollout)
			}
			again := t.TempDir()
			if err := placeRollout(again, th); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(filepath.Join(again, th.Path)); err != nil || string(data) != string(th.Rollout) {
				t.Fatalf("placed rollout = %q, %v", data, err)
			}
		})
	}
	// A kept thread whose path leaves the sessions tree is never placed.
	for _, bad := range []Thread{
		{ID: testThread, Path: "../config.toml"},
		{ID: testThread, Path: "sessions/2026/12/05/../../../../x-" + testThread + ".jsonl"},
		{ID: "../x", Path: "sessions/2026/12/05/rollout-1-../x.jsonl"},
	} {
		if err := placeRollout(t.TempDir(), &bad); err == nil {
			t.Errorf("placed %+v", bad)
		}
	}
}
