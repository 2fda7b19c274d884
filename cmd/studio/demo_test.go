package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
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
