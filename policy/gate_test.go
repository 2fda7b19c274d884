package policy

import (
	"strings"
	"testing"
	"time"
)

func gateFacts(edit func(*GateFacts)) GateFacts {
	f := GateFacts{
		HeadSHA:           headSHA,
		Verdict:           &StudioVerdict{CommitSHA: headSHA, Passed: true},
		ChangedPaths:      []string{"src/player/jump.gd", "tests/test_jump.gd"},
		WriteScope:        Scope{"src/player/**", "tests/test_jump.gd"},
		RequiredApprovals: 1,
		Approvals:         MatchApprovals(baseFacts(ModeStrictStudio, approve(21, "bob", 0))),
	}
	if edit != nil {
		edit(&f)
	}
	return f
}

func TestEvaluateGate(t *testing.T) {
	tests := []struct {
		name       string
		facts      GateFacts
		conclusion GateConclusion
		title      string
		golden     string
	}{
		{"success", gateFacts(nil), GateSuccess, "Ready: review passed, scope respected, approved", "gate-success.md"},
		{"review missing", gateFacts(func(f *GateFacts) { f.Verdict = nil }), GateActionRequired, "Waiting: no studio review yet", "gate-review-missing.md"},
		{"verdict on an older commit", gateFacts(func(f *GateFacts) { f.Verdict = &StudioVerdict{CommitSHA: oldSHA, Passed: true} }),
			GateActionRequired, "Waiting: review is for an older commit", "gate-review-stale.md"},
		{"failed verdict", gateFacts(func(f *GateFacts) { f.Verdict.Passed = false }), GateFailure, "Blocked: studio review failed", "gate-review-failed.md"},
		{"out-of-scope path pushed by a human", gateFacts(func(f *GateFacts) {
			// The human push moved the head past the verdict, and touched files outside the scope.
			f.HeadSHA = strings.Repeat("9", 40)
			f.ChangedPaths = append(f.ChangedPaths, ".github/workflows/ci.yml", "src/enemy/ai.gd", "notes`odd`.md")
			f.Approvals = MatchApprovals(func() ApprovalFacts {
				a := baseFacts(ModeStrictStudio, approve(21, "bob", 0))
				a.PullRequest.HeadSHA = f.HeadSHA
				return a
			}())
		}), GateFailure, "Blocked: review is for an older commit; 3 paths outside writeFiles; 0 of 1 required approval", "gate-out-of-scope.md"},
		{"too few approvals", gateFacts(func(f *GateFacts) {
			f.RequiredApprovals = 2
			f.Approvals = MatchApprovals(baseFacts(ModeStrictStudio,
				approve(21, "bob", 0),
				approve(22, "alice", time.Minute),
				with(approve(23, "bot", 2*time.Minute), func(r *Review) { r.Author, r.AuthorType = botLogin, AccountBot })))
		}), GateActionRequired, "Waiting: 1 of 2 required approvals", "gate-too-few-approvals.md"},
		{"no approvals at all", gateFacts(func(f *GateFacts) { f.Approvals = ApprovalMatch{} }), GateActionRequired, "Waiting: 0 of 1 required approval", ""},
		{"required approvals below one means one", gateFacts(func(f *GateFacts) { f.RequiredApprovals = 0; f.Approvals = ApprovalMatch{} }),
			GateActionRequired, "Waiting: 0 of 1 required approval", ""},
		{"unknown head fails closed", gateFacts(func(f *GateFacts) { f.HeadSHA = "" }), GateFailure, "Blocked: head commit unknown", ""},
		{"truncated file list fails closed", gateFacts(func(f *GateFacts) { f.ChangedPathsTruncated = true }), GateFailure, "Blocked: too many changed files to verify", ""},
		// A plan pull request that got `/studio review` has a passing verdict, no diff and maybe an
		// approval of the plan: still nothing to merge.
		{"a reviewed and approved plan commit waits for the implementation", gateFacts(func(f *GateFacts) { f.ChangedPaths, f.NothingImplemented = nil, true }),
			GateActionRequired, "Waiting: nothing implemented yet", ""},
		// What a guided run leaves when it ends done: the plan's draft pull request, reviewed,
		// waiting only for a person. The summary says both things to do, in order.
		{"a finished draft waits to be marked ready and approved", gateFacts(func(f *GateFacts) { f.Approvals = ApprovalMatch{}; f.Draft = true }),
			GateActionRequired, "Waiting: 0 of 1 required approval", "gate-draft-next.md"},
		{"renamed out of scope", gateFacts(func(f *GateFacts) { f.ChangedPaths = []string{"src/player/jump.gd", "docs/jump.gd"} }), GateFailure, "Blocked: 1 path outside writeFiles", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EvaluateGate(tt.facts)
			if got.Conclusion != tt.conclusion || got.Title != tt.title {
				t.Fatalf("conclusion %s, title %q; want %s, %q", got.Conclusion, got.Title, tt.conclusion, tt.title)
			}
			if tt.golden != "" {
				checkGolden(t, tt.golden, got.Summary)
			}
			wantNext := ""
			if tt.conclusion == GateActionRequired && strings.HasPrefix(tt.title, "Waiting: ") && strings.Contains(tt.title, "approval") && !strings.Contains(tt.title, ";") {
				wantNext = "Approve commit `" + ShortSHA(tt.facts.HeadSHA) + "`"
				if tt.facts.Draft {
					wantNext = "Mark the pull request ready for review, then approve commit `" + ShortSHA(tt.facts.HeadSHA) + "`"
				}
			}
			if !strings.HasPrefix(got.NextStep, wantNext) || (wantNext == "") != (got.NextStep == "") {
				t.Errorf("next step %q, want it to start with %q", got.NextStep, wantNext)
			}
			if again := EvaluateGate(tt.facts); again.Summary != got.Summary {
				t.Fatal("the gate is not deterministic")
			}
		})
	}
}

func TestGateSummaryCapsLongLists(t *testing.T) {
	f := gateFacts(func(f *GateFacts) {
		f.ChangedPaths = nil
		for i := range maxGateItems + 7 {
			f.ChangedPaths = append(f.ChangedPaths, "other/"+strings.Repeat("x", i+1))
		}
	})
	got := EvaluateGate(f)
	if strings.Count(got.Summary, "is outside writeFiles") != maxGateItems || !strings.Contains(got.Summary, "... and 7 more") {
		t.Fatalf("summary does not cap the list:\n%s", got.Summary)
	}
}

func TestCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"a.md":    "`a.md`",
		"a`b":     "``a`b``",
		"`a":      "`` `a ``",
		"a\nb.md": "`\"a\\nb.md\"`",
	} {
		if got := codeSpan(in); got != want {
			t.Errorf("codeSpan(%q) = %s, want %s", in, got, want)
		}
	}
}
