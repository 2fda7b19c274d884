package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/fakemodel"
)

func TestDemoShowsTheWholeStory(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"demo", "--dir", t.TempDir()}, func(string) string { return "" }, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("demo exit %d\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"reactions: eyes by github-actions[bot]",
		"- [x] Pull request opened: #2",
		"== Pull request #2: gameplay-programmer: Make the jump snappier",
		"studio/task-1 -> main",
		"Closes #1",
		"Studio-Task: #1",
		"src/player/jump.gd | ",
		"`README.md` (modified): outside writeFiles",
		"status=blocked branch=studio/task-1 pull-request=2 run-id=4242",
		"-- review by @github-actions[bot]",
		"### Studio review: passed",
		"-- check run studio/review on ",
		"-- check run studio/gate on ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if strings.Contains(out, "README.md | ") {
		t.Error("the out-of-scope README change must not be in the commit")
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), `unknown command "frobnicate"`) {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestActionOutsideActionsSaysWhatIsMissing(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := map[string]string{"INPUT_GITHUB-TOKEN": "x"}
	if code := run(context.Background(), []string{"action"}, func(k string) string { return env[k] }, &stdout, &stderr); code != exitError || !strings.Contains(stdout.String(), "GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_WORKSPACE, RUNNER_TEMP unset") {
		t.Fatalf("exit %d, stdout %q", code, stdout.String())
	}
}

// TestDemoWithTheRealCodexCLI runs `studio demo --real-codex` with the pinned Codex CLI against the
// scripted model server: the genuine path (proxy, argv, sandbox, event stream, review schema),
// offline.
func TestDemoWithTheRealCodexCLI(t *testing.T) {
	bin := codextest.Bin(t)
	const key = "sk-demo-test-key-0123456789"
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Patch("p1", "*** Begin Patch\n*** Update File: src/player/jump.gd\n@@\n-const JUMP_VELOCITY = -300.0\n+const JUMP_VELOCITY = -420.0\n*** Add File: tests/test_jump.gd\n+extends Node\n*** End Patch\n")),
		fakemodel.Reply(fakemodel.Message("Raised the jump velocity and added a test.")),
		fakemodel.Reply(fakemodel.Message(`{"blockers":[],"warnings":[],"summary":"The change is small and tested.","needsFix":false}`)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	env := map[string]string{"OPENAI_API_KEY": key, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"demo", "--real-codex", "--codex-path", bin, "--openai-base-url", model.URL, "--dir", t.TempDir()}, func(k string) string { return env[k] }, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"(the real Codex CLI)", "- [x] Verdict: **done**", "src/player/jump.gd | ", "tests/test_jump.gd | ", "status=done"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	reqs := model.Requests()
	if len(reqs) < 3 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("request %s reached the model with Authorization %q: the proxy must add the real key", r.Path, got)
		}
	}
}

func TestDemoRealCodexNeedsAKey(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"demo", "--real-codex"}, func(string) string { return "" }, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "OPENAI_API_KEY") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
