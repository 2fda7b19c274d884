package bot

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// fakeGitHub answers only what a test sets; any other call panics through the nil embedded
// interface, which proves the code under test did not need it.
type fakeGitHub struct {
	hub.API
	comments    map[int][]hub.Comment
	perms       map[string]string
	permErr     error
	asked       []string
	reviews     []hub.Review
	checkRuns   map[string][]hub.CheckRun // by check name
	checkErr    error
	created     []hub.CheckRun
	updated     []hub.CheckRun
	statuses    []hub.CommitStatus
	createErr   error
	listedFiles []string
	commits     []hub.PullCommit
}

func (f *fakeGitHub) PullCommits(context.Context, int) ([]hub.PullCommit, error) {
	return f.commits, nil
}

func (f *fakeGitHub) Comments(_ context.Context, n int) ([]hub.Comment, error) {
	return f.comments[n], nil
}
func (f *fakeGitHub) Permission(_ context.Context, login string) (string, error) {
	f.asked = append(f.asked, login)
	if f.permErr != nil {
		return "", f.permErr
	}
	return f.perms[login], nil
}
func (f *fakeGitHub) Reviews(context.Context, int) ([]hub.Review, error) { return f.reviews, nil }
func (f *fakeGitHub) CheckRuns(_ context.Context, _, name string) ([]hub.CheckRun, error) {
	return f.checkRuns[name], f.checkErr
}
func (f *fakeGitHub) CreateCheckRun(_ context.Context, cr hub.CheckRun) (hub.CheckRun, error) {
	if f.createErr != nil {
		return hub.CheckRun{}, f.createErr
	}
	f.created = append(f.created, cr)
	return cr, nil
}
func (f *fakeGitHub) UpdateCheckRun(_ context.Context, cr hub.CheckRun) error {
	f.updated = append(f.updated, cr)
	return nil
}
func (f *fakeGitHub) CreateStatus(_ context.Context, _ string, st hub.CommitStatus) error {
	f.statuses = append(f.statuses, st)
	return nil
}
func (f *fakeGitHub) PullFiles(context.Context, int) ([]string, error) { return f.listedFiles, nil }

// testBot is the bot of one event on gh, for tests that drive one step of a flow.
func testBot(gh hub.API, log *bytes.Buffer) *eventBot {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return New(Deps{GitHub: gh, Log: log, Now: func() time.Time { return now }}, Settings{}).forEvent(Trigger{})
}

func TestTaskOfBranch(t *testing.T) {
	t.Parallel()
	b := testBot(nil, &bytes.Buffer{})
	for ref, want := range map[string]int{
		"studio/task-7": 7, "studio/task-123": 123, "studio/task-": 0, "studio/task-07": 0,
		"studio/task-7x": 0, "studio/task--7": 0, "feature/task-7": 0, "studio/task-7/x": 0,
	} {
		if got := b.cfg.taskOfBranch(ref); got != want {
			t.Errorf("taskOfBranch(%q) = %d, want %d", ref, got, want)
		}
	}
}

func TestRevocationsGathering(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		comments []hub.Comment
		want     []policy.Revocation
		asked    []string
		logs     string
	}{
		{
			name:     "a writer's revoke on the issue counts with its creation time",
			comments: []hub.Comment{{ID: 1, Body: "/studio revoke", Author: "alice", AuthorType: "User", CreatedAt: at, UpdatedAt: at}},
			want:     []policy.Revocation{{CommentID: 1, Author: "alice", AuthorType: policy.AccountUser, AuthorPermission: policy.PermissionWrite, At: at}},
			asked:    []string{"alice"},
		},
		{
			name:     "an edited revoke never counts",
			comments: []hub.Comment{{ID: 2, Body: "/studio revoke", Author: "alice", AuthorType: "User", CreatedAt: at, UpdatedAt: at.Add(time.Minute)}},
			logs:     "edited comments never count",
		},
		{
			name:     "other commands and prose are not revokes",
			comments: []hub.Comment{{ID: 3, Body: "/studio run", Author: "alice", AuthorType: "User"}, {ID: 4, Body: "please /studio revoke", Author: "alice", AuthorType: "User"}},
		},
		{
			name: "a malformed or hidden revoke withdraws nothing",
			comments: []hub.Comment{
				{ID: 6, Body: "/studio revoke --dry-run", Author: "alice", AuthorType: "User", CreatedAt: at, UpdatedAt: at},
				{ID: 7, Body: "```\n/studio revoke\n```", Author: "alice", AuthorType: "User", CreatedAt: at, UpdatedAt: at},
				{ID: 8, Body: "> /studio revoke", Author: "alice", AuthorType: "User", CreatedAt: at, UpdatedAt: at},
				{ID: 9, Body: "<!--\n/studio revoke\n-->", Author: "alice", AuthorType: "User", CreatedAt: at, UpdatedAt: at},
				{ID: 10, Body: "<details>\n\n/studio revoke\n\n</details>", Author: "alice", AuthorType: "User", CreatedAt: at, UpdatedAt: at},
			},
		},
		{
			name:     "a bot's revoke is passed on for policy to refuse, without asking its permission",
			comments: []hub.Comment{{ID: 5, Body: "/studio revoke", Author: "renovate[bot]", AuthorType: "Bot", CreatedAt: at, UpdatedAt: at}},
			want:     []policy.Revocation{{CommentID: 5, Author: "renovate[bot]", AuthorType: policy.AccountBot, AuthorPermission: policy.PermissionUnknown, At: at}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := &fakeGitHub{comments: map[int][]hub.Comment{1: tt.comments}, perms: map[string]string{"alice": "write"}}
			var log bytes.Buffer
			got, err := testBot(gh, &log).revocations(context.Background(), 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(gh.asked, tt.asked) {
				t.Fatalf("revocations = %+v (asked %v), want %+v (asked %v)", got, gh.asked, tt.want, tt.asked)
			}
			if !strings.Contains(log.String(), tt.logs) {
				t.Errorf("log %q lacks %q", log.String(), tt.logs)
			}
		})
	}
}

func TestApprovalsOfGathersFacts(t *testing.T) {
	t.Parallel()
	submitted := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	digest := policy.TaskDigest("Make the jump snappier", "body")
	rec := policy.PlanRecord{ObjectiveSHA256: strings.Repeat("a", 64), TaskDigest: digest, Issue: 7, RequestedBy: "alice"}
	recordLine, err := rec.Render()
	if err != nil {
		t.Fatal(err)
	}
	// The body's marker is what a writer can edit: here it names bob as the requester, which
	// would make bob's approval a self-approval if it were believed.
	forged, err := policy.IdentityMarker{ObjectiveSHA256: rec.ObjectiveSHA256, Issue: 7, RequestedBy: "bob"}.Render()
	if err != nil {
		t.Fatal(err)
	}
	plan := []hub.PullCommit{{SHA: "base1"}, {SHA: "head", Message: "plan: x\n\nStudio-Phase: plan\n"}}
	mine := []hub.CheckRun{{ID: 3, Name: PlanCheckName, Conclusion: "neutral", Summary: "text\n" + recordLine + "\n", AppSlug: "github-actions"}}
	pr := hub.PullRequest{Number: 8, HeadSHA: "head", Author: "github-actions[bot]", Body: forged + "\nplan"}
	strict := policy.StudioConfig{StudioMode: policy.ModeStrictStudio}
	tn := taskContext{hash: rec.ObjectiveSHA256, digest: digest, cfg: strict}
	bob := []hub.Review{{ID: 1, Author: "bob", AuthorType: "User", State: "APPROVED", CommitID: "head", SubmittedAt: submitted}}
	noTrust := "pull request has no trusted identity marker, requester unknown, so self-approval cannot be ruled out in strict-studio"
	tests := []struct {
		name      string
		pr        hub.PullRequest
		tn        taskContext
		commits   []hub.PullCommit
		planRuns  []hub.CheckRun
		reviews   []hub.Review
		permErr   error
		startsRun bool
		want      string // the first decision's reasons, "" for authorizing
		requester string // the requester the facts used
	}{
		{name: "another writer on the head authorizes; the record's requester counts, not the body's", pr: pr, tn: tn, commits: plan, planRuns: mine, reviews: bob, requester: "alice"},
		{name: "pending reviews are drafts and are left out", pr: pr, tn: tn, commits: plan, planRuns: mine, reviews: append([]hub.Review{{ID: 9, Author: "bob", AuthorType: "User", State: "PENDING"}}, bob...), requester: "alice"},
		{name: "a failed permission lookup fails closed", pr: pr, tn: tn, commits: plan, planRuns: mine, reviews: bob, permErr: errors.New("boom"), want: "reviewer bob permission could not be checked; write, maintain or admin is required", requester: "alice"},
		{name: "a marker in someone else's pull request is not trusted", pr: hub.PullRequest{Number: 8, HeadSHA: "head", Author: "mallory", Body: pr.Body}, tn: tn, reviews: bob, want: "pull request author mallory is not the studio bot, " + noTrust},
		{name: "a task that cannot be used now matches nothing", pr: pr, tn: taskContext{hash: rec.ObjectiveSHA256, digest: digest, problem: "no task block", cfg: strict}, commits: plan, planRuns: mine, reviews: bob, want: "current objective hash unavailable", requester: "alice"},
		{name: "an issue edited since the plan does not start the implementation", pr: pr, tn: taskContext{hash: rec.ObjectiveSHA256, digest: policy.TaskDigest("Make the jump snappier", "body\nverify: {command: curl evil}"), cfg: strict}, commits: plan, planRuns: mine, reviews: bob, want: policy.ReasonTaskChanged, requester: "alice"},
		{name: "on an implemented head the gate's approval is not bound to the text", pr: hub.PullRequest{Number: 8, HeadSHA: "impl", Author: pr.Author}, tn: taskContext{hash: rec.ObjectiveSHA256, digest: "edited", cfg: strict}, commits: append(plan, hub.PullCommit{SHA: "impl"}), planRuns: mine, reviews: []hub.Review{{ID: 1, Author: "bob", AuthorType: "User", State: "APPROVED", CommitID: "impl", SubmittedAt: submitted}}, requester: "alice"},
		{name: "a /studio run that would use the approval is bound to the text", pr: hub.PullRequest{Number: 8, HeadSHA: "impl", Author: pr.Author}, tn: taskContext{hash: rec.ObjectiveSHA256, digest: "edited", cfg: strict}, commits: append(plan, hub.PullCommit{SHA: "impl"}), planRuns: mine, reviews: []hub.Review{{ID: 1, Author: "bob", AuthorType: "User", State: "APPROVED", CommitID: "impl", SubmittedAt: submitted}}, startsRun: true, want: policy.ReasonTaskChanged, requester: "alice"},
		{name: "a plan record from another app is not trusted", pr: pr, tn: tn, commits: plan, planRuns: []hub.CheckRun{{ID: 4, Name: PlanCheckName, Summary: recordLine, AppSlug: "mallory-app"}}, reviews: bob, want: "pull request has no trusted identity marker, " + policy.ReasonTaskChanged + ", requester unknown, so self-approval cannot be ruled out in strict-studio"},
		{name: "strict-studio without a plan commit never trusts the body", pr: pr, tn: tn, reviews: bob, want: noTrust},
		{name: "a guided override pull request (no plan) keeps the body marker for the gate", pr: pr, tn: taskContext{hash: rec.ObjectiveSHA256, digest: digest, cfg: policy.StudioConfig{StudioMode: policy.ModeGuidedStudio}}, reviews: bob, requester: "bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := &fakeGitHub{reviews: tt.reviews, perms: map[string]string{"bob": "write"}, permErr: tt.permErr, comments: map[int][]hub.Comment{},
				commits: tt.commits, checkRuns: map[string][]hub.CheckRun{PlanCheckName: tt.planRuns}}
			pa, err := testBot(gh, &bytes.Buffer{}).approvalsOf(context.Background(), tt.pr, tt.tn, 7, tt.startsRun)
			if err != nil {
				t.Fatal(err)
			}
			if len(pa.match.Decisions) != 1 {
				t.Fatalf("decisions = %+v", pa.match.Decisions)
			}
			if got := strings.Join(pa.match.Decisions[0].Reasons, ", "); got != tt.want {
				t.Errorf("reasons = %q, want %q", got, tt.want)
			}
			if pa.marker.RequestedBy != tt.requester {
				t.Errorf("requester = %q, want %q", pa.marker.RequestedBy, tt.requester)
			}
		})
	}
}

func TestPlanOfReportsWhyNoRecordCounts(t *testing.T) {
	t.Parallel()
	plan := []hub.PullCommit{{SHA: "head", Message: "plan\n\nStudio-Phase: plan"}}
	tests := []struct {
		name     string
		runs     []hub.CheckRun
		checkErr error
		want     string
	}{
		{name: "no checks: read", checkErr: hub.ErrForbidden, want: "grant the workflow `checks: write`"},
		{name: "no run by the bot", want: "has no `studio/plan` check run written by the bot"},
		{name: "a garbled record", runs: []hub.CheckRun{{Summary: "<!-- studio:plan {} -->", AppSlug: "github-actions"}}, want: "cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := &fakeGitHub{commits: plan, checkRuns: map[string][]hub.CheckRun{PlanCheckName: tt.runs}, checkErr: tt.checkErr}
			ps, err := testBot(gh, &bytes.Buffer{}).planOf(context.Background(), hub.PullRequest{Number: 8, HeadSHA: "head"}, 7)
			if err != nil || ps.found || !ps.headIsPlan || !strings.Contains(ps.why, tt.want) {
				t.Fatalf("planOf = %+v, %v; want why containing %q", ps, err, tt.want)
			}
		})
	}
}

func TestPublishGate(t *testing.T) {
	t.Parallel()
	res := policy.GateResult{Conclusion: policy.GateActionRequired, Title: "Waiting: no studio review yet", Summary: "s"}
	mine := hub.CheckRun{ID: 5, Name: policy.GateCheckName, Conclusion: "failure", Title: "Blocked", Summary: "old", AppSlug: "github-actions"}
	tests := []struct {
		name                       string
		existing                   []hub.CheckRun
		listErr, createErr         error
		created, updated, statuses int
		logs                       string
	}{
		{name: "first evaluation creates the check run", created: 1},
		{name: "a later one updates the bot's run in place", existing: []hub.CheckRun{mine}, updated: 1},
		{name: "an unchanged result writes nothing", existing: []hub.CheckRun{{ID: 5, Conclusion: "action_required", Title: res.Title, Summary: res.Summary, AppSlug: "github-actions"}}},
		{name: "another app's run of the same name is left alone", existing: []hub.CheckRun{{ID: 6, AppSlug: "mallory-app"}}, created: 1},
		{name: "without checks: write, a commit status says the same", createErr: hub.ErrForbidden, statuses: 1, logs: "grant the workflow `checks: write`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := &fakeGitHub{checkRuns: map[string][]hub.CheckRun{policy.GateCheckName: tt.existing}, checkErr: tt.listErr, createErr: tt.createErr}
			var log bytes.Buffer
			if err := testBot(gh, &log).publishGate(context.Background(), "abc", res); err != nil {
				t.Fatal(err)
			}
			if len(gh.created) != tt.created || len(gh.updated) != tt.updated || len(gh.statuses) != tt.statuses {
				t.Fatalf("created %d updated %d statuses %d", len(gh.created), len(gh.updated), len(gh.statuses))
			}
			if tt.updated == 1 && gh.updated[0].ID != mine.ID {
				t.Errorf("updated run %d, want %d", gh.updated[0].ID, mine.ID)
			}
			if tt.statuses == 1 && (gh.statuses[0].State != "pending" || gh.statuses[0].Context != policy.GateCheckName) {
				t.Errorf("status = %+v: waiting must be pending, which never lets a required status merge", gh.statuses[0])
			}
			if !strings.Contains(log.String(), tt.logs) {
				t.Errorf("log %q lacks %q", log.String(), tt.logs)
			}
		})
	}
}

func TestStudioVerdictReadsOnlyTheBotsReviewRun(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		runs []hub.CheckRun
		want *policy.StudioVerdict
	}{
		{"none", nil, nil},
		{"passed", []hub.CheckRun{{Conclusion: "success", AppSlug: "github-actions"}}, &policy.StudioVerdict{CommitSHA: "abc", Passed: true}},
		{"failed", []hub.CheckRun{{Conclusion: "failure", AppSlug: "github-actions"}}, &policy.StudioVerdict{CommitSHA: "abc"}},
		{"still running", []hub.CheckRun{{Status: "in_progress", AppSlug: "github-actions"}}, nil},
		{"forged by another app", []hub.CheckRun{{Conclusion: "success", AppSlug: "mallory-app"}}, nil},
		// The list order is not promised: the newest completed run decides, by time, then by id.
		{"an older pass listed first loses to a newer failure", []hub.CheckRun{
			{ID: 1, Conclusion: "success", AppSlug: "github-actions", CompletedAt: t0},
			{ID: 2, Conclusion: "failure", AppSlug: "github-actions", CompletedAt: t0.Add(time.Minute)},
		}, &policy.StudioVerdict{CommitSHA: "abc"}},
		{"an older failure listed first loses to a newer pass", []hub.CheckRun{
			{ID: 1, Conclusion: "failure", AppSlug: "github-actions", CompletedAt: t0},
			{ID: 2, Conclusion: "success", AppSlug: "github-actions", CompletedAt: t0.Add(time.Minute)},
		}, &policy.StudioVerdict{CommitSHA: "abc", Passed: true}},
		{"the same completion second falls back to the larger id", []hub.CheckRun{
			{ID: 7, Conclusion: "success", AppSlug: "github-actions", CompletedAt: t0},
			{ID: 9, Conclusion: "failure", AppSlug: "github-actions", CompletedAt: t0},
		}, &policy.StudioVerdict{CommitSHA: "abc"}},
		{"a newer run still in progress does not hide the newest verdict", []hub.CheckRun{
			{ID: 3, Status: "in_progress", AppSlug: "github-actions"},
			{ID: 2, Conclusion: "failure", AppSlug: "github-actions", CompletedAt: t0},
		}, &policy.StudioVerdict{CommitSHA: "abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := &fakeGitHub{checkRuns: map[string][]hub.CheckRun{ReviewCheckName: tt.runs}}
			got, err := testBot(gh, &bytes.Buffer{}).studioVerdict(context.Background(), "abc")
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("verdict = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestPlanBodyGolden(t *testing.T) {
	t.Parallel()
	marker := policy.IdentityMarker{ObjectiveSHA256: strings.Repeat("ab", 32), Issue: 7, RequestedBy: "octocat"}
	line, err := marker.Render()
	if err != nil {
		t.Fatal(err)
	}
	task := policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd"}, ApprovalScope: []string{"src/**"}}
	elig := policy.Evaluate(policy.EligibilityInput{ProjectStage: policy.StagePrototype, StudioMode: policy.ModeStrictStudio, Phase: policy.PhaseImplement})
	diag := policy.ApprovalDiagnostic{ProjectStage: policy.StagePrototype, StudioMode: policy.ModeStrictStudio, ApprovalScopes: task.ApprovalScope,
		Match: policy.ApprovalMatch{CurrentHash: marker.ObjectiveSHA256}}
	// The plan is model output: a fence inside it must not close ours.
	body := texts.PlanBody(line, 7, task, "1. Edit jump.gd\n```\nnot a fence end\n```", policy.RenderDryRun(elig, diag), "octocat", policy.ModeStrictStudio)
	checkGolden(t, "plan_body.md", body)
	if m, err := policy.ParseIdentityMarker(body); err != nil || m != marker {
		t.Fatalf("the body's marker parses to %+v, %v", m, err)
	}
}

func TestRecordPlanWritesTheBotsCheckRun(t *testing.T) {
	t.Parallel()
	rec := policy.PlanRecord{ObjectiveSHA256: strings.Repeat("a", 64), TaskDigest: strings.Repeat("b", 64), Issue: 7, RequestedBy: "alice"}
	line, err := rec.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		createErr error
	}{{"written", nil}, {"without checks: write the caller can fail closed", hub.ErrForbidden}} {
		t.Run(tt.name, func(t *testing.T) {
			gh := &fakeGitHub{createErr: tt.createErr}
			ev := testBot(gh, &bytes.Buffer{})
			r := &run{ev: ev, cfg: ev.cfg, tr: Trigger{Issue: 7}}
			err := r.recordPlan(context.Background(), "plansha", line)
			if tt.createErr != nil {
				if !errors.Is(err, hub.ErrForbidden) {
					t.Fatalf("err = %v, want ErrForbidden", err)
				}
				return
			}
			if err != nil || len(gh.created) != 1 {
				t.Fatalf("err %v, created %+v", err, gh.created)
			}
			cr := gh.created[0]
			got, perr := policy.ParsePlanRecord(cr.Summary)
			rec.Version = 1
			if cr.Name != PlanCheckName || cr.HeadSHA != "plansha" || cr.Conclusion != "neutral" || perr != nil || got != rec {
				t.Errorf("check run = %+v, record %+v, %v", cr, got, perr)
			}
		})
	}
}
