package policy

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	runT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	runT1 = runT0.Add(time.Minute)
)

func TestBotAppSlug(t *testing.T) {
	for login, want := range map[string]string{
		"github-actions[bot]": "github-actions",
		"My-Studio[bot]":      "my-studio",
		"octocat":             "octocat",
		"":                    "",
	} {
		if got := BotAppSlug(login); got != want {
			t.Errorf("BotAppSlug(%q) = %q, want %q", login, got, want)
		}
	}
}

func TestNewestCheckRun(t *testing.T) {
	const app = "github-actions"
	run := func(id int64, slug string, done time.Time) CheckRunFact {
		return CheckRunFact{ID: id, AppSlug: slug, CompletedAt: done}
	}
	tests := []struct {
		name   string
		runs   []CheckRunFact
		wantID int64 // 0: none
	}{
		{"none", nil, 0},
		{"only foreign runs", []CheckRunFact{run(9, "evil-app", runT1)}, 0},
		{"no app slug is foreign", []CheckRunFact{run(9, "", runT1)}, 0},
		{"the app slug is compared case-insensitively", []CheckRunFact{run(3, "GitHub-Actions", runT0)}, 3},
		{"later completion wins over list order", []CheckRunFact{run(1, app, runT1), run(2, app, runT0)}, 1},
		{"later completion wins over a higher id", []CheckRunFact{run(5, app, runT0), run(4, app, runT1)}, 4},
		{"same completion: higher id wins", []CheckRunFact{run(7, app, runT0), run(8, app, runT0), run(6, app, runT0)}, 8},
		{"a run not completed is older than a completed one", []CheckRunFact{run(1, app, runT0), run(2, app, time.Time{})}, 1},
		{"two runs not completed: higher id", []CheckRunFact{run(1, app, time.Time{}), run(2, app, time.Time{})}, 2},
		{"a newer foreign run is ignored", []CheckRunFact{run(1, app, runT0), run(99, "evil-app", runT1.Add(time.Hour))}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := NewestCheckRun(tt.runs, app)
			if ok != (tt.wantID != 0) || got.ID != tt.wantID {
				t.Errorf("NewestCheckRun = id %d, %v; want id %d", got.ID, ok, tt.wantID)
			}
		})
	}
	// Equal in time and id: the first listed is kept.
	first := CheckRunFact{ID: 1, AppSlug: app, CompletedAt: runT0, Summary: "first"}
	second := first
	second.Summary = "second"
	if got, _ := NewestCheckRun([]CheckRunFact{first, second}, app); got.Summary != "first" {
		t.Errorf("a full tie kept %q, want the first listed", got.Summary)
	}
	if _, ok := NewestCheckRun([]CheckRunFact{{ID: 1}}, ""); ok {
		t.Error("an empty app matched a run without an app")
	}
}

func TestStudioVerdictOf(t *testing.T) {
	const app, sha = "github-actions", "abc1234def"
	run := func(id int64, slug, conclusion string, done time.Time) CheckRunFact {
		return CheckRunFact{ID: id, Name: ReviewCheckName, AppSlug: slug, Conclusion: conclusion, CompletedAt: done}
	}
	tests := []struct {
		name string
		runs []CheckRunFact
		want *StudioVerdict
	}{
		{"no runs", nil, nil},
		{"passed", []CheckRunFact{run(1, app, "success", runT0)}, &StudioVerdict{CommitSHA: sha, Passed: true}},
		{"failed", []CheckRunFact{run(1, app, "failure", runT0)}, &StudioVerdict{CommitSHA: sha, Passed: false}},
		{"a foreign success is not a verdict", []CheckRunFact{run(1, "evil-app", "success", runT1)}, nil},
		{"a foreign newer success does not override a failure", []CheckRunFact{run(1, app, "failure", runT0), run(2, "evil-app", "success", runT1)},
			&StudioVerdict{CommitSHA: sha, Passed: false}},
		{"the newest verdict wins", []CheckRunFact{run(2, app, "success", runT1), run(1, app, "failure", runT0)}, &StudioVerdict{CommitSHA: sha, Passed: true}},
		{"a newer run without a verdict is skipped", []CheckRunFact{run(1, app, "failure", runT0), run(2, app, "neutral", runT1), run(3, app, "", time.Time{})},
			&StudioVerdict{CommitSHA: sha, Passed: false}},
		{"only runs without a verdict", []CheckRunFact{run(1, app, "cancelled", runT0), run(2, app, "", time.Time{})}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StudioVerdictOf(tt.runs, app, sha)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("StudioVerdictOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestHasPlanTrailer(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{"plan: x\n\nStudio-Task: #7\nStudio-Phase: plan\n", true},
		{"plan: x\r\n\r\nStudio-Phase: plan\r\n", true},
		{"  Studio-Phase: plan  ", true},
		{"plan: x\n\nStudio-Phase: plans\n", false},
		{"plan: x\n\nStudio-Phase: plan, not really\n", false},
		{"mentions Studio-Phase: plan inline", false},
		{"studio-phase: plan", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := HasPlanTrailer(tt.msg); got != tt.want {
			t.Errorf("HasPlanTrailer(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestPlanCommit(t *testing.T) {
	plan := "plan: x\n\n" + PlanPhaseTrailer + "\n"
	tests := []struct {
		name     string
		commits  []CommitFact
		head     string
		wantSHA  string
		wantHead bool
	}{
		{"no commits", nil, "aaa", "", false},
		{"no plan commit", []CommitFact{{"aaa", "impl"}}, "aaa", "", false},
		{"head is the plan", []CommitFact{{"aaa", plan}}, "aaa", "aaa", true},
		{"head compared case-insensitively", []CommitFact{{"abc", plan}}, "ABC", "abc", true},
		{"implemented after the plan", []CommitFact{{"aaa", plan}, {"bbb", "impl"}}, "bbb", "aaa", false},
		{"the last plan commit counts", []CommitFact{{"aaa", plan}, {"bbb", "impl"}, {"ccc", plan}}, "ccc", "ccc", true},
		{"no plan and no head", []CommitFact{{"aaa", "impl"}}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sha, head := PlanCommit(tt.commits, tt.head)
			if sha != tt.wantSHA || head != tt.wantHead {
				t.Errorf("PlanCommit = %q, %v; want %q, %v", sha, head, tt.wantSHA, tt.wantHead)
			}
		})
	}
}

func TestTrustPlanRecord(t *testing.T) {
	const app, plan = "github-actions", "0123456789abcdef"
	rec := PlanRecord{ObjectiveSHA256: planHash, TaskDigest: strings.Repeat("e", 64), Issue: 7, RequestedBy: "octocat"}
	line, err := rec.Render()
	if err != nil {
		t.Fatal(err)
	}
	rec.Version = 1
	other := rec
	other.Issue = 8
	otherLine, _ := other.Render()
	run := func(id int64, slug, summary string, done time.Time) CheckRunFact {
		return CheckRunFact{ID: id, Name: PlanCheckName, AppSlug: slug, Conclusion: "neutral", CompletedAt: done, Summary: "The plan for #7...\n\n" + summary + "\n"}
	}
	tests := []struct {
		name    string
		runs    []CheckRunFact
		forbid  bool
		wantErr string // "" means trusted
	}{
		{"the bot's record", []CheckRunFact{run(1, app, line, runT0)}, false, ""},
		{"newest of the bot's runs", []CheckRunFact{run(2, app, line, runT1), run(1, app, "garbage", runT0)}, false, ""},
		{"unreadable check runs", []CheckRunFact{run(1, app, line, runT0)}, true,
			"the token cannot read check runs, so the plan's `studio/plan` record on `0123456` cannot be read and no approval can count; grant the workflow `checks: write`"},
		{"no runs", nil, false,
			"plan commit `0123456` has no `studio/plan` check run written by the bot, so no approval can count; run `/studio run` on #7 to plan again"},
		{"only a foreign record", []CheckRunFact{run(1, "evil-app", line, runT0)}, false,
			"plan commit `0123456` has no `studio/plan` check run written by the bot, so no approval can count; run `/studio run` on #7 to plan again"},
		{"a foreign newer record does not replace the bot's", []CheckRunFact{run(1, app, line, runT0), run(2, "evil-app", otherLine, runT1)}, false, ""},
		{"the newest record is malformed", []CheckRunFact{run(1, app, line, runT0), run(2, app, "no record here", runT1)}, false,
			"the `studio/plan` check run on `0123456` cannot be read (no studio plan record); run `/studio run` on #7 to plan again"},
		{"a record for another issue", []CheckRunFact{run(1, app, otherLine, runT0)}, false,
			"the `studio/plan` record on `0123456` is for issue #8, not #7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TrustPlanRecord(PlanRecordFacts{PlanSHA: plan, Issue: 7, App: app, Runs: tt.runs, RunsUnreadable: tt.forbid, TriggerPhrase: "/studio"})
			switch {
			case tt.wantErr == "" && (err != nil || got != rec):
				t.Errorf("TrustPlanRecord = %+v, %v; want %+v", got, err, rec)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr || got != PlanRecord{}):
				t.Errorf("TrustPlanRecord = %+v, %v\nwant error %s", got, err, tt.wantErr)
			}
		})
	}
}

func TestTrustedMarker(t *testing.T) {
	const bot = "github-actions[bot]"
	m := IdentityMarker{ObjectiveSHA256: planHash, Issue: 7, RequestedBy: "octocat"}
	line, err := m.Render()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := IdentityMarker{ObjectiveSHA256: planHash, Issue: 8, RequestedBy: "octocat"}.Render()
	body := line + "\n<!-- studio:pr issue=7 -->\nCloses #7\n"
	tests := []struct {
		name          string
		author, login string
		body          string
		wantErr       string
	}{
		{"the bot's pull request", bot, bot, body, ""},
		{"login compared case-insensitively", "GitHub-Actions[bot]", bot, body, ""},
		{"opened by someone else", "mallory", bot, body, "pull request #12 was opened by mallory, not the bot: its identity marker is not trusted"},
		{"no bot login trusts nobody", "", "", body, "pull request #12 was opened by , not the bot: its identity marker is not trusted"},
		{"no marker", bot, bot, "Closes #7", "pull request #12: the pull request body has no studio identity marker"},
		{"marker for another issue", bot, bot, other + "\n", "pull request #12: its identity marker names issue #8, its branch task #7; not trusted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, gotLine, err := TrustedMarker(MarkerFacts{PullNumber: 12, PullAuthor: tt.author, Body: tt.body, BotLogin: tt.login, Issue: 7})
			if tt.wantErr == "" {
				if err != nil || got != m || gotLine != line {
					t.Errorf("TrustedMarker = %+v, %q, %v; want %+v", got, gotLine, err, m)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr || got != (IdentityMarker{}) || gotLine != "" {
				t.Errorf("TrustedMarker = %+v, %q, %v\nwant error %s", got, gotLine, err, tt.wantErr)
			}
		})
	}
	_, _, err = TrustedMarker(MarkerFacts{PullAuthor: bot, BotLogin: bot, Body: "nothing", Issue: 7})
	if !errors.Is(err, ErrNoIdentityMarker) {
		t.Errorf("a missing marker is %v, want it to wrap ErrNoIdentityMarker", err)
	}
}
