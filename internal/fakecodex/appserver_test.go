package fakecodex_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/policy/routing"
)

// The stand-in as `codex app-server`, driven by the studio's own runner: a lifecycle's calls
// play the script (the edit lands, the answer and the usage come back, the review takes the
// review list), the invocations record the model, effort and sandbox the studio asked for, the
// fix pass resumes the implementer's thread from the rollout the stand-in kept, and a refused
// turn carries the structured status the refusal judgement reads.
func TestAppServerPlaysTheScriptForTheStudiosRunner(t *testing.T) {
	block := `{"blockers":[{"message":"no gravity","file":"jump.gd","line":1}],"warnings":[],"summary":"one bug","needsFix":true}`
	ctl, home := controlled(t, fakecodex.Script{
		Calls:   []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "jump.gd", Content: "v = 1\n"}}, FinalMessage: "added"}, {FinalMessage: "fixed"}},
		Reviews: []fakecodex.Call{{FinalMessage: block}, {FinalMessage: fakecodex.PassingReview}},
	})
	ws := t.TempDir()
	cli := codex.CLI{Bin: bin, CodexHome: home, Env: []string{"PATH=" + os.Getenv("PATH"), "CODEX_HOME=" + home}, Engine: codex.EngineAppServer, KillGrace: 2 * time.Second}
	routes, err := routing.ResolveRoutes(routing.ModelChoice{Model: "gpt-5.6-terra", Effort: "medium"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := codex.NewEvidence(t.TempDir(), "1", "gameplay-programmer", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := (&codex.Lifecycle{Runner: cli, Evidence: ev}).Run(context.Background(), codex.Plan{
		Workdir: ws, Sandbox: "danger-full-access", Routes: routes, Prompt: "implement", ReviewPrompt: "review",
		MaxFixPasses: 1, FixPrompt: func(context.Context, codex.FixInput) (string, error) { return "fix", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.FinalStatus != codex.StatusDone || len(out.FixPasses) != 1 || out.Implementation.Result.FinalMessage != "added" {
		t.Fatalf("status %s, %d fix passes\n%s", out.FinalStatus, len(out.FixPasses), out.Output())
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "jump.gd")); string(data) != "v = 1\n" {
		t.Errorf("jump.gd = %q", data)
	}
	if impl, fix := out.Implementation.Result.Thread, out.FixPasses[0].Execution.Result.Thread; impl == nil || fix == nil || impl.ID != fix.ID {
		t.Errorf("the fix pass did not go on with the implementer's thread: %+v %+v", impl, fix)
	}
	if out.Usage.InputTokens != 4 {
		t.Errorf("usage = %+v, want 4 calls of the default usage", out.Usage)
	}
	invs := ctl.Invocations()
	if len(invs) != 4 {
		t.Fatalf("%d invocations", len(invs))
	}
	for i, inv := range invs {
		wantSandbox, review := "danger-full-access", i%2 == 1
		if review {
			wantSandbox = "read-only"
		}
		if inv.Engine != "app-server" || inv.Model != "gpt-5.6-terra" || inv.Sandbox != wantSandbox || inv.Review != review {
			t.Errorf("invocation %d = %+v", i, inv)
		}
	}
	if !strings.Contains(invs[0].Prompt, "implement") || invs[0].Effort != "medium" {
		t.Errorf("first invocation = %+v", invs[0])
	}

	const msg = "unexpected status 401 Unauthorized: Incorrect API key provided"
	ctl.SetScript(fakecodex.Script{Calls: []fakecodex.Call{{TurnFailed: msg}}})
	res := cli.Run(context.Background(), codex.Request{Phase: "implement", Prompt: "p", Workdir: ws, Sandbox: "danger-full-access", RunDir: filepath.Join(t.TempDir(), "refused"), Timeout: time.Minute})
	if ref := codex.Refusal(res); ref == nil || ref.Kind != codex.RefusedKey || ref.Status != 401 {
		t.Errorf("refusal %+v from %+v", ref, res.Events)
	}
}

// A kept thread goes on in a lifecycle of its own (Plan.Thread, a new job's CODEX_HOME): the
// implementation resumes it with its history; one that thread/resume refuses (a rollout the app
// server cannot find or parse) is not the run's failure: a new thread starts, and the outcome
// and the lines say why.
func TestLifecycleResumesAKeptThreadOrStartsANewOne(t *testing.T) {
	ctl, home := controlled(t, fakecodex.Script{Calls: []fakecodex.Call{{FinalMessage: "first"}, {FinalMessage: "again"}}})
	ws := t.TempDir()
	cli := codex.CLI{Bin: bin, CodexHome: home, Env: []string{"PATH=" + os.Getenv("PATH"), "CODEX_HOME=" + home}, Engine: codex.EngineAppServer, KillGrace: 2 * time.Second}
	routes, err := routing.ResolveRoutes(routing.ModelChoice{Model: "gpt-5.6-terra", Effort: "medium"}, "")
	if err != nil {
		t.Fatal(err)
	}
	run := func(thread *codex.Thread) codex.Outcome {
		t.Helper()
		ev, err := codex.NewEvidence(t.TempDir(), "1", "gameplay-programmer", nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := (&codex.Lifecycle{Runner: cli, Evidence: ev}).Run(context.Background(), codex.Plan{
			Workdir: ws, Sandbox: "danger-full-access", Routes: routes, Prompt: "go on", Thread: thread,
		})
		if err != nil || out.FinalStatus != codex.StatusDone {
			t.Fatalf("run: %v, %s\n%s", err, out.FinalStatus, out.Output())
		}
		return out
	}
	first := run(nil)
	if first.Thread == nil || first.ResumeNote != "" {
		t.Fatalf("the first run kept no thread: %+v", first)
	}
	second := run(first.Thread)
	invs := ctl.Invocations()
	if last := invs[len(invs)-1]; !last.Resumed || last.Thread != first.Thread.ID || last.History != 1 {
		t.Errorf("the second run's call = %+v, want thread %s resumed with its one turn", last, first.Thread.ID)
	}
	if second.Thread == nil || second.Thread.ID != first.Thread.ID || second.ResumeNote != "" {
		t.Errorf("the second run left thread %+v (%q)", second.Thread, second.ResumeNote)
	}
	// A thread whose rollout is not where the app server looks for it: a new thread.
	lost := *first.Thread
	lost.Path = strings.Replace(lost.Path, "sessions/2026/01/01/", "sessions/2026/01/02/", 1)
	third := run(&lost)
	if third.ResumeNote == "" || third.Thread == nil || third.Thread.ID == lost.ID || !strings.Contains(third.Output(), "could not be resumed") {
		t.Errorf("a thread the app server refused: note %q, thread %+v\n%s", third.ResumeNote, third.Thread, third.Output())
	}
}
