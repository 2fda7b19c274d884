package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

const blockingReview = `{"blockers":[{"message":"The jump has no regression test.","file":"src/player/jump.gd","line":1},"Coyote time is missing."],"warnings":["Consider a constant for gravity."],"summary":"Not yet.","needsFix":true}`

func (w *world) checkRuns(name string) map[string]string {
	out := map[string]string{}
	for _, cr := range w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
		if cr.Name == name {
			out[cr.HeadSHA] = cr.Conclusion
		}
	}
	return out
}

func TestReviewBlocksThenAFixPassClearsIt(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.Emu.AddUser("fixer")
	w.script(
		fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"}}},
		fakecodex.Call{Edits: []fakecodex.Edit{{Write: "tests/test_jump.gd", Content: "extends Node\n# regression test\n"}}},
	)
	writeReviews(t, w, blockingReview, fakecodex.PassingReview)

	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "done" {
		t.Fatalf("status %q\n%s", res.outputs["status"], res.stderr)
	}
	if len(w.writes()) != 2 || len(w.reviews()) != 2 {
		t.Fatalf("calls: %d writes, %d reviews; want implementation + one fix pass, each reviewed", len(w.writes()), len(w.reviews()))
	}
	fixPrompt := w.writes()[1].Prompt
	for _, want := range []string{"The jump has no regression test.", "Coyote time is missing."} {
		if !strings.Contains(fixPrompt, want) {
			t.Errorf("the fix prompt must carry the real blocker %q", want)
		}
	}
	dir := w.remote("studio/task-1")
	if got := git(t, dir, "log", "--format=%s|%(trailers:key=Studio-Pass,valueonly)", "origin/main..HEAD"); got != "gameplay-programmer: Jump|fix-1\n\ngameplay-programmer: Jump|" {
		t.Errorf("branch history = %q, want the implementation then fix pass 1", got)
	}
	first := git(t, dir, "rev-parse", "HEAD^")
	head := git(t, dir, "rev-parse", "HEAD")
	if got := w.checkRuns("studio/review"); got[first] != "failure" || got[head] != "success" {
		t.Errorf("studio/review check runs = %v, want failure on %s and success on %s", got, first[:7], head[:7])
	}
	pr := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)[0]
	reviews := w.Emu.Reviews(sandbox.Owner, sandbox.Repo, pr.Number)
	if len(reviews) != 2 || !strings.Contains(reviews[0].Body, "changes requested") || !strings.Contains(reviews[0].Body, "Coyote time is missing.") || reviews[0].CommitID != first || !strings.Contains(reviews[1].Body, "passed") {
		t.Fatalf("pull-request reviews = %+v", reviews)
	}
	inline := w.Emu.ReviewComments(sandbox.Owner, sandbox.Repo, pr.Number)
	if len(inline) != 1 || inline[0].Path != "src/player/jump.gd" || inline[0].Line != 1 || !strings.Contains(inline[0].Body, "no regression test") {
		t.Errorf("inline review comments = %+v, want the blocker that names a line of the diff", inline)
	}
	if status := w.botComments(n)[0].Body; !strings.Contains(status, "1 fix pass") {
		t.Errorf("status comment should count the fix pass:\n%s", status)
	}
}

// writeReviews replaces the script's reviews by verdicts, keeping its writing calls.
func writeReviews(t *testing.T, w *world, verdicts ...string) {
	t.Helper()
	s := w.codex.Script()
	s.Reviews = nil
	for _, v := range verdicts {
		s.Reviews = append(s.Reviews, fakecodex.Call{FinalMessage: v})
	}
	w.codex.SetScript(s)
}

func TestFailingVerificationGetsAFixPass(t *testing.T) {
	w := newWorld(t, nil)
	body := "```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/test_jump.gd]\nverify: {command: test, args: [-f, tests/test_jump.gd]}\n```\n"
	n := w.issue("Jump", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(
		fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}},
		fakecodex.Call{Edits: []fakecodex.Edit{{Write: "tests/test_jump.gd", Content: "test\n"}}},
	)
	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "done" || len(w.writes()) != 2 {
		t.Fatalf("status %q after %d writing calls\n%s", res.outputs["status"], len(w.writes()), res.stderr)
	}
	if !strings.Contains(w.writes()[1].Prompt, "exit=1") {
		t.Errorf("the fix prompt must carry the failed verification:\n%s", w.writes()[1].Prompt)
	}
	if len(w.reviews()) != 1 {
		t.Errorf("review runs only after a passing verification: %d reviews", len(w.reviews()))
	}
	evidence := filepath.Join(w.RunnerTemp, "studio-runs", "4242-gameplay-programmer")
	for _, f := range []string{"prompt.md", "metadata.json", "events.jsonl", "output.txt"} {
		if _, err := os.Stat(filepath.Join(evidence, f)); err != nil {
			t.Errorf("run evidence %s: %v", f, err)
		}
	}
	out, _ := os.ReadFile(filepath.Join(evidence, "output.txt"))
	if !strings.Contains(string(out), "verification: test -f tests/test_jump.gd exit=1") || !strings.Contains(string(out), "final status: done") {
		t.Errorf("output.txt:\n%s", out)
	}
}

func TestCodexTimeoutKeepsInScopeWorkAndBlocks(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "half done\n"}}, Sleep: 60_000_000_000})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_TIMEOUT-MINUTES": "0.01"})
	if res.outputs["status"] != "blocked" {
		t.Fatalf("status %q\n%s", res.outputs["status"], res.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "src/player/jump.gd")); err != nil || string(got) != "half done\n" {
		t.Errorf("work done before the timeout must be on the branch: %q, %v", got, err)
	}
	if status := w.botComments(n)[0].Body; !strings.Contains(status, "timed out") {
		t.Errorf("the verdict must say the call timed out:\n%s", status)
	}
	if len(w.writes()) != 1 {
		t.Errorf("a timed-out call gets no fix pass: %d writing calls", len(w.writes()))
	}
}

func TestMalformedReviewBlocks(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
	writeReviews(t, w, "LGTM, ship it!")
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0"})
	if res.outputs["status"] != "blocked" {
		t.Fatalf("status %q\n%s", res.outputs["status"], res.stderr)
	}
	if status := w.botComments(n)[0].Body; !strings.Contains(status, "malformed review JSON") {
		t.Errorf("status comment:\n%s", status)
	}
	head := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)[0].HeadSHA
	if w.checkRuns("studio/review")[head] != "failure" {
		t.Errorf("a malformed verdict is a failed review: %v", w.checkRuns("studio/review"))
	}
}

func TestStudioReviewCommandReviewsAHumanPush(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "done" {
		t.Fatalf("run: %q\n%s", res.outputs["status"], res.stderr)
	}
	pr := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)[0]
	human, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-1", ghemu.CommitSpec{Message: "tweak", Files: map[string]string{"tests/test_jump.gd": "human\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if w.checkRuns("studio/review")[human] != "" {
		t.Fatal("no review can exist yet for the human's commit")
	}
	_, payload = w.comment(pr.Number, sandbox.Writer, "/studio review")
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("review: exit %d status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	if w.checkRuns("studio/review")[human] != "success" {
		t.Errorf("studio/review on the human's head = %v", w.checkRuns("studio/review"))
	}
	if w.reviews()[len(w.reviews())-1].Sandbox != "read-only" {
		t.Error("the review must run read-only")
	}
	// Re-delivering the command reviews nothing twice.
	before := len(w.reviews())
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "skipped" || len(w.reviews()) != before {
		t.Errorf("re-delivered /studio review: status %q, reviews %d -> %d", res.outputs["status"], before, len(w.reviews()))
	}
}

func TestProfileGuidanceReachesCodexForThatRunOnly(t *testing.T) {
	profile, err := os.ReadFile(filepath.Join("..", "..", "prompts", "guidance", "testdata", "hybrid.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := sandbox.DefaultFiles("fast-prototype")
	files[".codex/profile.json"] = strings.ReplaceAll(string(profile), `"builder"`, `"gameplay-programmer"`)
	w := newWorld(t, files)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "done" {
		t.Fatalf("status %q\n%s", res.outputs["status"], res.stderr)
	}
	prompt := w.writes()[0].Prompt
	if !strings.Contains(prompt, "# Multi-agent guidance (compiled from .codex/profile.json)") || !strings.Contains(prompt, "gameplay-programmer") {
		t.Errorf("the role's compiled guidance must reach Codex:\n%s", prompt)
	}
	installed, _ := filepath.Glob(filepath.Join(w.RunnerTemp, "studio-guidance", "4242-gameplay-programmer", "guidance", "agents", "*.md"))
	if len(installed) != 1 {
		t.Errorf("guidance installed under RUNNER_TEMP: %v", installed)
	}
	if ls := git(t, w.remote("studio/task-1"), "ls-files"); strings.Contains(ls, "guidance/") {
		t.Errorf("guidance must never be committed:\n%s", ls)
	}

	bad := sandbox.DefaultFiles("fast-prototype")
	bad[".codex/profile.json"] = `{"profile":{"id":"x","root":"lead"},"agents":{"lead":{"model":"gpt-9"}}}`
	w = newWorld(t, bad)
	n = w.issue("Jump", taskBody)
	_, payload = w.comment(n, sandbox.Writer, "/studio run")
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "blocked" || !strings.Contains(w.botComments(n)[0].Body, "invalid profile") {
		t.Fatalf("an invalid profile blocks the run with its key path: %q\n%s", res.outputs["status"], w.botComments(n)[0].Body)
	}
}
