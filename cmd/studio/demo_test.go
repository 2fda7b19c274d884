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

// The demo tells the story `studio init` sets up: guided-studio, so `/studio run` first opens a
// draft plan pull request, an approval of it starts the implementation, and the implementation's
// pull request is reviewed and gated. The scripted agent also edits a file outside writeFiles, so
// the demo shows the scope check too.
func TestDemoShowsTheWholeStory(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"demo", "--dir", t.TempDir()}, func(string) string { return "" }, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("demo exit %d\n%s", code, stderr.String())
	}
	out := stdout.String()
	plan, impl, ok := strings.Cut(out, "== 2. ")
	if !ok {
		t.Fatalf("the demo has no second step:\n%s", out)
	}
	for _, want := range []string{
		"studioMode guided-studio, as `studio init` sets up",
		"== 1. @octocat comments `/studio run` on acme/hop#1",
		"== Pull request #2 (draft): gameplay-programmer: Make the jump snappier",
		"This draft pull request holds the plan Codex wrote for #1",
		"**Approving this pull request starts the implementation**",
		"1. Raise JUMP_VELOCITY",
		"status=awaiting-approval branch=studio/task-1 pull-request=2",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan step lacks %q:\n%s", want, plan)
		}
	}
	for _, want := range []string{
		"@octocat approves pull request #2",
		"reactions: eyes by github-actions[bot]",
		"- [x] Pull request opened: #2",
		"studio/task-1 -> main",
		"Closes #1",
		"Studio-Task: #1",
		"src/player/jump.gd | ",
		"`README.md` (modified): outside writeFiles",
		"status=blocked branch=studio/task-1 pull-request=2 run-id=4242",
		"-- review by @octocat",
		"-- review by @github-actions[bot]",
		"### Studio review: passed",
		"-- check run studio/review on ",
		"-- check run studio/gate on ",
		"studio demo --studio-mode fast-prototype",
	} {
		if !strings.Contains(impl, want) {
			t.Errorf("the implementation step lacks %q:\n%s", want, impl)
		}
	}
	if strings.Contains(out, "README.md | ") {
		t.Error("the out-of-scope README change must not be in the commit")
	}
	// It ends with where its files are and what to do next.
	if !strings.Contains(out, "The demo's files (the remote, the workspace and the run evidence named above) are kept in ") ||
		!strings.Contains(out, "Now set up your own repository: in its checkout run\n  studio init --name \"My Game\" --engine godot --mode prototype") {
		t.Errorf("the demo does not end with its files and the next step:\n%s", out)
	}
	if strings.Contains(out, "final status: done") || !strings.Contains(impl, "final status: blocked") {
		t.Error("the lifecycle's final line must be the blocked verdict, not the Codex steps' done")
	}
}

// Without --dir the demo's folder goes away on exit: it says so, and how to keep it, since the
// status comment names an evidence folder inside it.
func TestDemoSaysItsFilesGoAwayWithoutDir(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI([]string{"demo", "--studio-mode", "fast-prototype"}, nil)
	if code != exitOK {
		t.Fatalf("demo exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "Run evidence: ") || !strings.Contains(out, "are deleted when the demo ends; `studio demo --dir DIR` keeps them") {
		t.Errorf("the demo names an evidence folder without saying it is deleted on exit:\n%s", out)
	}
}

// --studio-mode picks the story as `studio init --studio-mode` picks the project's: fast-prototype
// implements at once; strict-studio needs an approval by a writer other than the requester.
func TestDemoStudioModes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode       string
		want, lack []string
	}{
		{"fast-prototype", []string{"studioMode fast-prototype", "== 1. @octocat comments `/studio run`", "status=blocked branch=studio/task-1 pull-request=2", "src/player/jump.gd | "}, []string{"== 2. ", "draft"}},
		{"strict-studio", []string{"studioMode strict-studio", "a writer other than @octocat", "== 2. @hubot approves pull request #2", "status=blocked branch=studio/task-1 pull-request=2"}, nil},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"demo", "--studio-mode", tt.mode, "--dir", t.TempDir()}, func(string) string { return "" }, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("demo lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, lack := range tt.lack {
				if strings.Contains(stdout.String(), lack) {
					t.Errorf("demo must not show %q:\n%s", lack, stdout.String())
				}
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"demo", "--studio-mode", "yolo"}, func(string) string { return "" }, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--studio-mode must be fast-prototype, guided-studio or strict-studio") {
		t.Errorf("bad mode: exit %d, %q", code, stderr.String())
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), `unknown command "frobnicate"`) {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestActionOutsideActionsSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	bin := codextest.Bin(t)
	const key = "sk-demo-test-key-0123456789"
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Message("1. Raise the jump velocity.\n2. Add a test.")),
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
	for _, want := range []string{"(the real Codex CLI; studioMode guided-studio", "1. Raise the jump velocity.", "- [x] Verdict: **done**", "src/player/jump.gd | ", "tests/test_jump.gd | ", "status=done"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	reqs := model.Requests()
	if len(reqs) < 4 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("request %s reached the model with Authorization %q: the proxy must add the real key", r.Path, got)
		}
	}
}

func TestDemoRealCodexNeedsAKey(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"demo", "--real-codex"}, func(string) string { return "" }, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "OPENAI_API_KEY") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
