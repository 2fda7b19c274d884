package main

import (
	"os"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The REST requests of a run are deterministic, so their budget is an ordinary test (issue #10):
// a fast-prototype `/studio run` needs 12, one with a review and a fix pass 17, before the ledger
// and the kept thread.
// Before the memoized facts (bot/hub/memo.go) the same runs made 35 and 43.
// threadKeep is what keeping the agent's thread costs a run on the app-server engine (the exec
// engine keeps none).
var threadKeep = map[bool]int{true: 0, false: 4}[os.Getenv("STUDIO_TEST_CODEX_ENGINE") == "exec"]

func TestRunStaysInsideItsRequestBudget(t *testing.T) {
	t.Parallel()
	edit := func(content string) fakecodex.Call {
		return fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: content}}, FinalMessage: "ok"}
	}
	for _, tc := range []struct {
		name      string
		block     string
		script    fakecodex.Script
		budget    int
		wantCodex int
	}{
		// The counts are exact, so a request added anywhere on the path shows here; each counts the
		// run's ledger entry (refs/studio/spend) and its kept thread (refs/studio/threads: blob,
		// tree, commit, ref; a task that never kept one reads no ref first) too (docs/runtime.md),
		// and the one listing that finds the organisation keeps no defaults (orgProbe).
		{"plain run", "runPolicy: {review: false}\n", fakecodex.Script{Calls: []fakecodex.Call{edit("x\n")}}, 12 + ledgerAppend + threadKeep + orgProbe, 1},
		{"review and one fix pass", "", fakecodex.Script{
			Calls:   []fakecodex.Call{edit("x\n"), edit("y\n")},
			Reviews: []fakecodex.Call{{FinalMessage: `{"blockers":["the jump is too high"],"warnings":[],"summary":"no","needsFix":true}`}, {FinalMessage: fakecodex.PassingReview}},
		}, 17 + ledgerAppend + threadKeep + orgProbe, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, nil)
			n := w.issue("Jump", "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n"+tc.block+"```\n")
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			w.scriptWith(tc.script)
			before := len(w.Emu.Requests())
			res := w.run("issue_comment", payload, nil)
			if res.code != 0 || res.outputs["status"] != "done" {
				t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
			}
			if got := len(w.invocations()); got != tc.wantCodex {
				t.Fatalf("codex calls = %d, want %d", got, tc.wantCodex)
			}
			var api []string
			for _, r := range w.Emu.Requests()[before:] {
				if !r.Git {
					api = append(api, r.Method+" "+r.Path)
				}
			}
			if len(api) != tc.budget {
				t.Errorf("%d REST requests, want exactly %d:\n%s", len(api), tc.budget, strings.Join(api, "\n"))
			}
			for _, r := range api {
				// What the payload or the run's own checkout already holds is never asked for (the
				// organisation's defaults are another repository's).
				if strings.Contains(r, "/contents/") && !strings.HasPrefix(r, "GET /repos/acme/.github/contents/") || r == "GET /repos/acme/hop" || strings.HasPrefix(r, "GET /repos/acme/hop/issues/1 ") {
					t.Errorf("asked GitHub for what the run already knows: %s", r)
				}
			}
		})
	}
}

// orgProbe is what an event pays to learn its organisation keeps no studio defaults: one listing
// of `.codex` in `<owner>/.github` (bot/orgdefaults).
const orgProbe = 1

// ledgerAppend is what a run that spent adds for its ledger entry, the month's first: read the
// ref, make the commit, create the ref.
const ledgerAppend = 3
