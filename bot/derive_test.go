package bot

import (
	"context"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// One run decides each thing once (issue #22): studio.json is decoded, the task block parsed, the
// role resolved and the approval identity hashed once, by the run, and the gate recomputed after
// the push takes them from the run instead of deciding them again. The approvals are matched once
// per head: a run that pushes matches them for the new head only.
func TestOneRunDecidesEachOnce(t *testing.T) {
	t.Parallel()
	noRole := "Make the jump feel snappier.\n\n```studio\nwriteFiles: [src/player/jump.gd]\n```\n"
	edit := []agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}}
	type counts struct{ config, taskBlock, role, hash, approvals int32 }
	for _, c := range []struct {
		name    string
		files   map[string]string
		event   func(w *hWorld) Trigger
		answers []string
		status  string
		want    counts
	}{
		{
			name: "a plain run", status: "done", want: counts{1, 1, 1, 1, 1},
			event: func(w *hWorld) Trigger {
				return w.comment(w.issue("Snappier jump", hTask), sandbox.Writer, "/studio run")
			},
		},
		{
			name: "a run with a review and a fix pass", status: "done", want: counts{1, 1, 1, 1, 1},
			answers: []string{`{"blockers":[{"message":"too high","file":"src/player/jump.gd","line":3}],"warnings":[],"summary":"Too high.","needsFix":true}`, passingReview},
			event: func(w *hWorld) Trigger {
				return w.comment(w.issue("Snappier jump", hTask), sandbox.Writer, "/studio run")
			},
		},
		{
			name: "a role label's run", status: "done", want: counts{1, 1, 1, 1, 1},
			event: func(w *hWorld) Trigger {
				n := w.issue("Snappier jump", noRole, "studio:role/gameplay-programmer")
				return w.labeled(n, "studio:role/gameplay-programmer", sandbox.Writer)
			},
		},
		{
			name: "a dry run", status: "done", want: counts{1, 1, 1, 1, 0},
			event: func(w *hWorld) Trigger {
				return w.comment(w.issue("Snappier jump", hTask), sandbox.Writer, "/studio run --dry-run")
			},
		},
		{
			name: "a strict plan", files: studioFiles("strict-studio", ""), status: "awaiting-approval", want: counts{1, 1, 1, 1, 1},
			event: func(w *hWorld) Trigger {
				return w.comment(w.issue("Snappier jump", hTask), sandbox.Writer, "/studio run")
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newHWorld(t, c.files)
			w.script(edit, c.answers...)
			tr := c.event(w)
			ev := w.bot().forEvent(tr)
			out, err := ev.handle(context.Background(), tr)
			if err != nil || out.Status != c.status {
				t.Fatalf("handle = %q, %v; want %q\n%s\nlog:\n%s", out.Status, err, c.status, out.Summary, w.log.String())
			}
			d := &ev.derived.count
			got := counts{d.config.Load(), d.taskBlock.Load(), d.role.Load(), d.hash.Load(), d.approvals.Load()}
			if got != c.want {
				t.Errorf("decoded studio.json %d, parsed the task block %d, resolved the role %d, hashed the identity %d, matched approvals %d times; want %+v",
					got.config, got.taskBlock, got.role, got.hash, got.approvals, c.want)
			}
			assertDecodedOnce(t, ev)
		})
	}
}

// The gate of a review event decides the task once too, and an approval that starts the
// implementation hands the run the task it decided: one decoding, parse, role and hash for the
// whole event, and approvals matched for the plan's head and then for the implementation's.
func TestApprovedImplementationDecidesEachOnce(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, studioFiles("strict-studio", ""))
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{message: "The plan."}, {write: map[string]string{"src/player/jump.gd": hJump}}})
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "awaiting-approval")
	tr := w.review(out.PullRequest, hReviewer, ghemu.ReviewSpec{})
	ev := w.bot().forEvent(tr)
	got, err := ev.handle(context.Background(), tr)
	if err != nil || got.Status != "done" {
		t.Fatalf("handle = %q, %v\nlog:\n%s", got.Status, err, w.log.String())
	}
	d := &ev.derived.count
	if d.config.Load() != 1 || d.taskBlock.Load() != 1 || d.role.Load() != 1 || d.hash.Load() != 1 || d.approvals.Load() != 2 {
		t.Errorf("decoded studio.json %d, parsed the task block %d, resolved the role %d, hashed %d, matched approvals %d; want 1, 1, 1, 1, 2",
			d.config.Load(), d.taskBlock.Load(), d.role.Load(), d.hash.Load(), d.approvals.Load())
	}
	assertDecodedOnce(t, ev)
}

// assertDecodedOnce checks that the event keeps no studio.json bytes past its one decode: policy's
// configuration, the prompts' project facts and the spend caps are all read from the decoded
// value, so none of them can decode the file a second time.
func assertDecodedOnce(t *testing.T, ev *eventBot) {
	t.Helper()
	ev.derived.mu.Lock()
	defer ev.derived.mu.Unlock()
	if len(ev.derived.configs) == 0 {
		t.Fatal("the event decoded no studio.json")
	}
	for base, c := range ev.derived.configs {
		if c.cfg.Raw != nil {
			t.Errorf("the configuration of %s keeps studio.json's %d bytes for a second decode", base, len(c.cfg.Raw))
		}
	}
}

// Creating a task reads the default branch's studio.json through the same one decode as a run
// (config), not a second reader of its own.
func TestTaskCreateDecodesTheConfigOnce(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Plan the level", "Tasks for the level.")
	tr := w.comment(n, sandbox.Writer, "/studio task create --role gameplay-programmer --write-file src/player/jump.gd Snappier jump")
	ev := w.bot().forEvent(tr)
	out, err := ev.handle(context.Background(), tr)
	if err != nil || out.Status != "done" {
		t.Fatalf("handle = %q, %v\n%s\nlog:\n%s", out.Status, err, out.Summary, w.log.String())
	}
	if got := ev.derived.count.config.Load(); got != 1 {
		t.Errorf("decoded studio.json %d times; want 1", got)
	}
	assertDecodedOnce(t, ev)
}
