package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// TestAFloodedAnswerIsCutAndSaid: the agent answers with 6 MiB, which Codex prints as one event
// line on its stdout. The run still ends, the call's events stay within their bound, and the
// status comment says what was cut.
func TestAFloodedAnswerIsCutAndSaid(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, FinalMessage: "FLOOD-START " + strings.Repeat("a", 6<<20)})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0"})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var events int64
	_ = filepath.WalkDir(filepath.Join(w.RunnerTemp, "studio-runs"), func(p string, d fs.DirEntry, err error) error {
		if fi, ierr := d.Info(); err == nil && ierr == nil && d.Name() == "events.jsonl" && strings.Contains(p, "implementation") {
			events = fi.Size()
		}
		return nil
	})
	if events == 0 || events > 4<<20+4096 {
		t.Errorf("the implementation's events.jsonl holds %d bytes, want the start of the answer and no more than a line's bound", events)
	}
	var status string
	if comments := w.botComments(n); len(comments) > 0 {
		status = comments[0].Body
	}
	if !strings.Contains(status, "**Output cut:** Codex's output was cut: 1 event line(s) over 4194304 bytes kept to their start") {
		t.Errorf("the status comment does not say what was cut:\n%.3000s", status)
	}
}
