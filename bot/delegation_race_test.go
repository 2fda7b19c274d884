package bot

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
)

const raceProfile = `{"profile": {"id": "race", "root": "producer"}, "logical_hash": "0123456789abcdef",
 "routes": {"r": {"name": "Default"}}, "models": {"m": {"upstream_id": "gpt-5.6-terra", "route": "r"}},
 "coordination": {"orchestration": "mcp", "max_active_agents": 3, "max_depth": 1, "max_active_writers": 2,
                  "result_visibility": "parent-only", "contradiction_policy": "root_adjudication"},
 "agents": {
  "producer": {"model": "m", "can_spawn": ["gameplay-programmer"], "trust": "high", "verification": "self",
               "permissions": "read-only", "execution_mode": "turn", "stall_warning_seconds": 300, "finalization_grace_seconds": 60},
  "gameplay-programmer": {"model": "m", "trust": "medium", "verification": "self", "permissions": "workspace-write",
               "execution_mode": "turn", "stall_warning_seconds": 300, "finalization_grace_seconds": 60}}}`

// Two producers delegate at the same moment, in parallel goroutines (each its own runner and
// workspace), children that write the same files: each decision admits them (they are different
// parents), and the refs keep the limits anyway: never more slots than the bound, never two
// children holding conflicting write locks, never a child started twice.
func TestParallelDelegationsKeepTheLimits(t *testing.T) {
	t.Parallel()
	for round := 0; round < 3; round++ {
		files := studioFiles("fast-prototype", "active")
		files[roles.ProfilePath] = raceProfile
		files[".github/workflows/studio.yml"] = "on:\n  workflow_dispatch:\n    inputs:\n      task: {required: false}\n      orchestration: {required: false}\n      slot: {required: false}\njobs: {}\n"
		w := newHWorld(t, files)
		var triggers []Trigger
		for i := 0; i < 2; i++ {
			n := w.issue(fmt.Sprintf("Milestone %d", i), "Plan it.\n\n```studio\nrole: producer\n```\n")
			triggers = append(triggers, w.comment(n, sandbox.Writer, "/studio run"))
		}
		answer := `{"summary": "Two.", "delegate": [
		  {"role": "gameplay-programmer", "objective": "Jump", "writeFiles": ["src/player/jump.gd"], "files": [], "dependsOn": []},
		  {"role": "gameplay-programmer", "objective": "Coyote", "writeFiles": ["src/player/coyote.gd"], "files": [], "dependsOn": []}]}`
		var wg sync.WaitGroup
		errs := make([]error, len(triggers))
		for i, tr := range triggers {
			wg.Add(1)
			go func(i int, tr Trigger) {
				defer wg.Done()
				dir := filepath.Join(t.TempDir(), "workspace")
				if out, err := exec.Command("git", "clone", "--quiet", w.Emu.GitURL(sandbox.Owner, sandbox.Repo), dir).CombinedOutput(); err != nil {
					errs[i] = fmt.Errorf("clone: %v: %s", err, out)
					return
				}
				gh, err := hub.NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo, hub.WithLogin(sandbox.BotLogin))
				if err != nil {
					errs[i] = err
					return
				}
				temp := t.TempDir()
				b := New(Deps{
					GitHub:    gh,
					Workspace: &gitops.Repo{Dir: dir, Token: w.Token, RemoteURL: w.Emu.URL() + "/" + sandbox.Owner + "/" + sandbox.Repo + ".git", StateDir: filepath.Join(temp, "studio-git")},
					Codex:     &scriptedCodex{answers: []string{answer}},
					Redactor:  codex.NewRedactor(gitops.SecretForms(w.Token)...),
					Now:       w.clk.Now,
				}, Settings{BotLogin: sandbox.BotLogin, RunID: fmt.Sprint(7000 + i), WorkDir: dir, RunsDir: filepath.Join(temp, "runs"), CodexTimeout: time.Minute})
				_, errs[i] = b.Handle(context.Background(), tr)
			}(i, tr)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		// Each producer filed its two children; between them at most 2 slots are taken.
		slots, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, "refs/studio/slots/")
		if err != nil {
			t.Fatal(err)
		}
		if len(slots) > 2 {
			t.Fatalf("round %d: %d slots held", round, len(slots))
		}
		started := map[string]int{}
		for _, d := range w.Emu.Dispatches(sandbox.Owner, sandbox.Repo) {
			started[fmt.Sprint(d.Inputs["task"])]++
		}
		for task, n := range started {
			if n > 1 {
				t.Fatalf("round %d: #%s dispatched %d times", round, task, n)
			}
		}
		locks, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, "refs/studio/locks/")
		if err != nil {
			t.Fatal(err)
		}
		gh, err := hub.NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo)
		if err != nil {
			t.Fatal(err)
		}
		var held []policy.LockRecord
		for ref := range locks {
			if !policy.IsWriteLockRef(ref) {
				continue
			}
			_, msg, err := gh.LockRecord(context.Background(), ref)
			if err != nil {
				t.Fatal(err)
			}
			if rec, ok := policy.ParseLockRecord(msg); ok {
				held = append(held, rec)
			}
		}
		byKey := map[string]int{}
		for _, h := range held {
			if other, ok := byKey[h.Key]; ok && other != h.Task {
				t.Fatalf("round %d: %s held by #%d and #%d", round, h.Key, other, h.Task)
			}
			byKey[h.Key] = h.Task
		}
		if len(started) == 0 || len(started) > 2 {
			t.Fatalf("round %d: %d children started, want 1 or 2 (the bound)", round, len(started))
		}
		for _, tr := range triggers {
			if kids := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, tr.Issue); len(kids) != 2 {
				t.Fatalf("round %d: #%d filed %d children, want 2", round, tr.Issue, len(kids))
			}
		}
	}
}
