package policy

import (
	"slices"
	"testing"
)

func TestVerdict(t *testing.T) {
	readme := map[string]ScopeRefusal{"README.md": {Kind: "modified", Reason: "role `producer` may not change files (read-only); reverted"}}
	twoRefused := map[string]ScopeRefusal{
		"z.txt":       {Kind: "added", Reason: "outside writeFiles"},
		"a/link.gd":   {Kind: "added", Reason: "a symbolic link"},
		"docs/new.md": {Kind: "deleted", Reason: "outside writeFiles"},
	}
	tests := []struct {
		name         string
		facts        VerdictFacts
		want         string
		wantBlockers []string
	}{
		{"done and committed", VerdictFacts{LifecycleDone: true, Committed: []string{"a.gd"}}, VerdictDone, nil},
		{"read-only role, nothing changed: the report is the deliverable",
			VerdictFacts{LifecycleDone: true, ReadOnly: true, OutOfScope: map[string]ScopeRefusal{}}, VerdictDone, nil},
		{"writing role committed nothing", VerdictFacts{LifecycleDone: true},
			VerdictBlocked, []string{"Codex changed nothing inside writeFiles"}},
		// A re-run after a crash: the branch already holds the task's in-scope work, and this run
		// rightly added nothing.
		{"nothing new, the branch holds the task's work", VerdictFacts{LifecycleDone: true, OnBranch: []string{"a.gd"}}, VerdictDone, nil},
		{"read-only role changed a file",
			VerdictFacts{LifecycleDone: true, ReadOnly: true, OutOfScope: readme},
			VerdictBlocked, []string{"`README.md` (modified): role `producer` may not change files (read-only); reverted; not committed"}},
		{"refused paths in path order, after which nothing-committed follows",
			VerdictFacts{LifecycleDone: true, OutOfScope: twoRefused},
			VerdictBlocked, []string{
				"`a/link.gd` (added): a symbolic link; not committed",
				"`docs/new.md` (deleted): outside writeFiles; not committed",
				"`z.txt` (added): outside writeFiles; not committed",
				"Codex changed nothing inside writeFiles",
			}},
		{"committed and refused", VerdictFacts{LifecycleDone: true, Committed: []string{"a.gd"}, OutOfScope: map[string]ScopeRefusal{"b.gd": {Kind: "added", Reason: "outside writeFiles"}}},
			VerdictBlocked, []string{"`b.gd` (added): outside writeFiles; not committed"}},
		{"blocked without a reason", VerdictFacts{Committed: []string{"a.gd"}},
			VerdictBlocked, []string{"the Codex lifecycle ended blocked"}},
		{"blocked: the reason is not repeated from the blockers",
			VerdictFacts{Reason: "verification failed: exit 1", Blockers: []string{"verification failed: exit 1", "review: missing test"}, Committed: []string{"a.gd"}},
			VerdictBlocked, []string{"verification failed: exit 1", "review: missing test"}},
		{"blocked at max fix passes: reason, refused paths, then the standing blockers",
			VerdictFacts{Reason: "reached max fix passes (1)", Blockers: []string{"review: missing test", "verification failed: exit 2"},
				Committed: []string{"a.gd"}, OutOfScope: map[string]ScopeRefusal{"b.gd": {Kind: "added", Reason: "outside writeFiles"}}},
			VerdictBlocked, []string{"reached max fix passes (1)", "`b.gd` (added): outside writeFiles; not committed", "review: missing test", "verification failed: exit 2"}},
		{"blocked with no reason: the stand-in is not repeated either",
			VerdictFacts{Blockers: []string{"the Codex lifecycle ended blocked", "x"}},
			VerdictBlocked, []string{"the Codex lifecycle ended blocked", "x"}},
		// A blocked lifecycle that committed nothing is blocked for the lifecycle's reason; "changed
		// nothing" would only distract from it.
		{"blocked and nothing committed", VerdictFacts{Reason: "Codex timed out"},
			VerdictBlocked, []string{"Codex timed out"}},
		{"read-only role blocked", VerdictFacts{ReadOnly: true, Reason: "Codex exited with status 1"},
			VerdictBlocked, []string{"Codex exited with status 1"}},
		// The API refused a call: the setup is at fault, whatever the agent wrote before.
		{"refused: error, with the refusal first", VerdictFacts{Refused: true, Reason: "the model API refused the call (HTTP 401): bad key", Blockers: []string{"the model API refused the call (HTTP 401): bad key"}},
			VerdictError, []string{"the model API refused the call (HTTP 401): bad key"}},
		{"refused after committing, with a refused path", VerdictFacts{Refused: true, Reason: "the model API did not answer: x", Committed: []string{"a.gd"},
			OutOfScope: map[string]ScopeRefusal{"b.gd": {Kind: "added", Reason: "outside writeFiles"}}},
			VerdictError, []string{"the model API did not answer: x", "`b.gd` (added): outside writeFiles; not committed"}},
		{"blockers of a done lifecycle are ignored", VerdictFacts{LifecycleDone: true, Blockers: []string{"stale"}, Committed: []string{"a.gd"}}, VerdictDone, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, blockers := Verdict(tt.facts)
			if got != tt.want || !slices.Equal(blockers, tt.wantBlockers) {
				t.Errorf("Verdict = %s %q\nwant      %s %q", got, blockers, tt.want, tt.wantBlockers)
			}
		})
	}
}

func TestStatusForVerdict(t *testing.T) {
	for verdict, want := range map[string]string{VerdictDone: StatusDone, VerdictBlocked: StatusBlocked, VerdictError: StatusError} {
		if got := StatusForVerdict(verdict); got != want || !IsTaskStatus(got) {
			t.Errorf("StatusForVerdict(%q) = %q, want the task status %q", verdict, got, want)
		}
	}
}
