package policy

import (
	"fmt"
	"strings"
	"time"
)

// Which records the bot may believe. Anyone with `checks: write` can create a check run of any
// name, anyone who can push can write any commit message, and any writer can edit a pull request
// body; so a verdict or plan record counts only when the bot's own GitHub App wrote it, and the
// newest such record wins whatever order the API lists them in.

// Check runs the studio writes besides GateCheckName.
const (
	// ReviewCheckName is the studio review's verdict on the commit it reviewed: `success` means it
	// passed, `failure` that it found blockers.
	ReviewCheckName = "studio/review"
	// PlanCheckName is written on the plan commit; its summary holds the PlanRecord approvals are
	// matched against.
	PlanCheckName = "studio/plan"
)

// PlanPhaseTrailer marks the empty commit the plan phase pushes. A pull request whose head is that
// commit is waiting for its implementation.
const PlanPhaseTrailer = "Studio-Phase: plan"

// CheckRunFact is one check run as the API lists it, with what trust decisions read.
type CheckRunFact struct {
	ID   int64
	Name string
	// AppSlug is the GitHub App that created the run (`github-actions` for the Actions token);
	// it is the only thing that tells the bot's runs from anyone else's.
	AppSlug    string
	Status     string // queued, in_progress, completed
	Conclusion string // success, failure, neutral, ...; "" while not completed
	// CompletedAt orders runs of one name; zero while not completed.
	CompletedAt time.Time
	// Summary is the output summary, where the plan record is.
	Summary string
}

// ByApp reports whether the run was created by app (case-insensitive). No app is never trusted,
// so an empty app matches nothing.
func (r CheckRunFact) ByApp(app string) bool {
	return app != "" && strings.EqualFold(r.AppSlug, app)
}

// newerThan orders check runs by completion time, then by id (ids grow): the API's list order is
// not documented, so position never decides.
func (r CheckRunFact) newerThan(o CheckRunFact) bool {
	if c := r.CompletedAt.Compare(o.CompletedAt); c != 0 {
		return c > 0
	}
	return r.ID > o.ID
}

// BotAppSlug is the GitHub App the bot's check runs are attributed to, derived from the login it
// writes as: `github-actions` for github-actions[bot], the app's slug for an App token.
func BotAppSlug(botLogin string) string {
	return strings.TrimSuffix(strings.ToLower(botLogin), "[bot]")
}

// NewestCheckRun returns the newest of runs (one name on one commit) created by app: the latest
// completion time, then the highest id; a run not completed yet is older than every completed
// one. Of two runs equal in both, the first listed is kept. ok is false when app created none.
func NewestCheckRun(runs []CheckRunFact, app string) (CheckRunFact, bool) {
	var newest CheckRunFact
	found := false
	for _, r := range runs {
		if !r.ByApp(app) {
			continue
		}
		if !found || r.newerThan(newest) {
			newest, found = r, true
		}
	}
	return newest, found
}

// StudioVerdictOf reads the studio review verdict of commit sha from its ReviewCheckName runs:
// the newest run by app that ended with a verdict (`success` or `failure`; a run still going or
// ended otherwise says nothing). nil when there is none.
func StudioVerdictOf(runs []CheckRunFact, app, sha string) *StudioVerdict {
	var verdicts []CheckRunFact
	for _, r := range runs {
		if r.Conclusion == "success" || r.Conclusion == "failure" {
			verdicts = append(verdicts, r)
		}
	}
	newest, ok := NewestCheckRun(verdicts, app)
	if !ok {
		return nil
	}
	return &StudioVerdict{CommitSHA: sha, Passed: newest.Conclusion == "success"}
}

// HasPlanTrailer reports whether a commit message has the plan trailer on a line of its own.
func HasPlanTrailer(message string) bool {
	for _, line := range strings.Split(message, "\n") {
		if strings.TrimSpace(line) == PlanPhaseTrailer {
			return true
		}
	}
	return false
}

// CommitFact is one commit of a pull request. Only the message is read: anyone who can push can
// write the trailer, so a plan commit is trusted only through the bot's PlanCheckName record on
// it (TrustPlanRecord), never through its message, author or committer.
type CommitFact struct {
	SHA     string
	Message string
}

// PlanCommit finds the pull request's plan commit: the last of commits (in the API's order,
// oldest first) carrying the plan trailer; "" when none does (a fast-prototype or override run).
// headIsPlan says the head is that commit, so nothing is implemented yet and an approval of it
// would start the implementation.
func PlanCommit(commits []CommitFact, headSHA string) (sha string, headIsPlan bool) {
	for _, c := range commits {
		if HasPlanTrailer(c.Message) {
			sha = c.SHA
		}
	}
	return sha, sha != "" && strings.EqualFold(sha, headSHA)
}

// PlanRecordFacts is what the trust in a plan record is decided on.
type PlanRecordFacts struct {
	PlanSHA string // the plan commit (PlanCommit)
	Issue   int    // the task issue the pull request's branch belongs to
	App     string // the bot's app (BotAppSlug)
	// Runs are the PlanCheckName check runs on PlanSHA, in the API's order.
	Runs []CheckRunFact
	// RunsUnreadable is set when the token may not read check runs (403).
	RunsUnreadable bool
	// TriggerPhrase (default /studio) is named in the advice to plan again.
	TriggerPhrase string
}

// TrustPlanRecord returns the plan record approvals may be matched against: the one in the newest
// PlanCheckName run the bot's app wrote on the plan commit, for this issue. Anything else (no such
// run, an unreadable or malformed record, a record for another issue, runs the token cannot read)
// is an error saying why no approval can count; it fails closed.
func TrustPlanRecord(f PlanRecordFacts) (PlanRecord, error) {
	sha := ShortSHA(f.PlanSHA)
	if f.RunsUnreadable {
		return PlanRecord{}, fmt.Errorf("the token cannot read check runs, so the plan's `%s` record on `%s` cannot be read and no approval can count; grant the workflow `checks: write`", PlanCheckName, sha)
	}
	newest, ok := NewestCheckRun(f.Runs, f.App)
	if !ok {
		return PlanRecord{}, fmt.Errorf("plan commit `%s` has no `%s` check run written by the bot, so no approval can count; run `%s run` on #%d to plan again", sha, PlanCheckName, f.TriggerPhrase, f.Issue)
	}
	rec, err := ParsePlanRecord(newest.Summary)
	switch {
	case err != nil:
		return PlanRecord{}, fmt.Errorf("the `%s` check run on `%s` cannot be read (%v); run `%s run` on #%d to plan again", PlanCheckName, sha, err, f.TriggerPhrase, f.Issue)
	case rec.Issue != f.Issue:
		return PlanRecord{}, fmt.Errorf("the `%s` record on `%s` is for issue #%d, not #%d", PlanCheckName, sha, rec.Issue, f.Issue)
	}
	return rec, nil
}

// MarkerFacts is what the trust in a pull request body's identity marker is decided on.
type MarkerFacts struct {
	PullNumber int
	PullAuthor string
	Body       string
	BotLogin   string
	Issue      int // the task issue the pull request's branch belongs to
}

// TrustedMarker reads the identity marker of a studio pull request's body, with its rendered line.
// It is trusted only in a pull request the bot opened (an empty bot login trusts nobody) and only
// when it names the task the branch belongs to; otherwise the error says why, for the log. Only
// used where no plan record exists (fast-prototype and override runs): a body any writer can edit
// never outranks TrustPlanRecord.
func TrustedMarker(f MarkerFacts) (IdentityMarker, string, error) {
	if f.BotLogin == "" || !strings.EqualFold(f.PullAuthor, f.BotLogin) {
		return IdentityMarker{}, "", fmt.Errorf("pull request #%d was opened by %s, not the bot: its identity marker is not trusted", f.PullNumber, f.PullAuthor)
	}
	m, err := ParseIdentityMarker(f.Body)
	if err != nil {
		return IdentityMarker{}, "", fmt.Errorf("pull request #%d: %w", f.PullNumber, err)
	}
	if m.Issue != f.Issue {
		return IdentityMarker{}, "", fmt.Errorf("pull request #%d: its identity marker names issue #%d, its branch task #%d; not trusted", f.PullNumber, m.Issue, f.Issue)
	}
	line, err := m.Render()
	if err != nil {
		return IdentityMarker{}, "", fmt.Errorf("pull request #%d: %w", f.PullNumber, err)
	}
	return m, line, nil
}
