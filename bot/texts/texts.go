package texts

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/codex-studio/studio-action/policy"
)

// Every text the studio writes for people (replies, verdicts, reviews, pull request bodies, plan
// bodies, commit messages) is rendered here, from plain values, so each has one place and a golden
// file per state (texts_test.go, testdata/golden/texts/). Untrusted text (issue titles, command
// lines, model output) is quoted with oneLine, codeSpan or fenced before it reaches Markdown.

// permissionReply refuses a command from an account without write permission.
func PermissionReply(line, login, owner, repo, perm string) string {
	return fmt.Sprintf("> %s\n\n@%s, this command needs write, maintain or admin permission on %s/%s; you have %s. Ask a maintainer to run it.",
		QuoteLine(line), login, owner, repo, perm)
}

// usageReply answers a malformed command with what was wrong and how it is written.
func UsageReply(line, login string, err error) string {
	return fmt.Sprintf("> %s\n\n@%s, %s Nothing was done.", QuoteLine(line), login, err.Error())
}

// misplacedReply answers a verb written where it does not work.
// verbsHere lists the commands that work where the verb was written.
func MisplacedReply(line, login, phrase, verb, verbWhere string, pull bool, issue int, verbsHere string) string {
	here := "on an issue the commands are " + verbsHere
	if pull {
		here = fmt.Sprintf("on a studio pull request the commands are %s; run `%s run` on the task issue #%d", verbsHere, phrase, issue)
	}
	return fmt.Sprintf("> %s\n\n@%s, `%s %s` works %s; %s. Nothing was done.", QuoteLine(line), login, phrase, verb, verbWhere, here)
}

// busyReply says an event was not carried out because another run held the task's lock: whether
// GitHub says that run is live (with a link to it), and what a command sent again will do.
func BusyReply(event, actor string, busy *policy.LockBusy, runURL string) string {
	who := ""
	if actor != "" {
		who = "@" + actor + ", "
	}
	expires := busy.Holder.Expires.UTC().Format(time.RFC3339)
	body := fmt.Sprintf("> %s\n\n%s%s holds the lock of #%d and %s. This run waited %s for it, so this was **not carried out**.\n\nSend it again once that run has finished, or re-run this workflow run: the command then waits up to %s for a live run, and takes the task at once when GitHub reports that run completed, or when its lock expires (%s).",
		QuoteLine(event), who, runLink(busy.Holder), busy.Issue, holderLiveness(busy), spanText(busy.Waited), spanText(busy.Wait), expires)
	if runURL != "" {
		body += fmt.Sprintf("\n\n[This workflow run](%s)", runURL)
	}
	return body
}

// spanText is a wait for people: "20 minutes", "1m30s".
func spanText(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d%time.Minute == 0:
		return fmt.Sprintf("%d %s", d/time.Minute, Plural(int(d/time.Minute), "minute", "minutes"))
	}
	return d.Round(time.Second).String()
}

// holderLiveness says what GitHub last said about the lock holder's workflow run.
func holderLiveness(busy *policy.LockBusy) string {
	switch run := busy.Run; {
	case run.Found && run.Status == "completed":
		// Completed as another attempt than the record's (policy.DecideRunLock): proves nothing.
		return fmt.Sprintf("is taken to be live: GitHub reports attempt %d of its workflow run completed, which is not the attempt that took the lock", run.Attempt)
	case run.Found:
		return fmt.Sprintf("is live: GitHub reports its workflow run `%s`", OneLine(run.Status, 40))
	case run.Answered:
		return "is taken to be live: GitHub does not know its workflow run (a deleted run, or a token without `actions: read`, gets that answer)"
	case policy.HolderRunID(busy.Holder) == 0:
		return "is taken to be live until its lock expires: its record names no workflow run to ask GitHub about (a local run's)"
	}
	return "is taken to be live: GitHub could not be asked whether its workflow run is still going"
}

// pullTitle and pullBody are the task pull request's: the identity marker first (approvals.go),
// then the task it closes and the run's summary, cut to GitHub's body limit.
func PullTitle(role, issueTitle string) string {
	return fmt.Sprintf("%s: %s", role, OneLine(issueTitle, 200))
}

func PullBody(marker string, issue int, role, runID, runURL, summary string) string {
	body := fmt.Sprintf("%s<!-- studio:pr issue=%d -->\nCloses #%d\n\nCodex Studio ran `%s` for #%d (run `%s`).\n\n%s\n",
		markerPrefix(marker), issue, issue, role, issue, runID, summary)
	if runURL != "" {
		body += fmt.Sprintf("\n[Workflow run](%s)\n", runURL)
	}
	return policy.FitBody(body, policy.NoteCutWorkflowRun)
}

// revokedSummary is the status comment's summary after `/studio revoke`.
func RevokedSummary(actor string, pull int, diagnostics string) string {
	return fmt.Sprintf("**Approvals withdrawn** by @%s: no approval of pull request #%d submitted before this command counts any more. Approve again to authorize.\n\n%s",
		actor, pull, Fenced(diagnostics, "text"))
}

// noRevokeTarget is the summary of a `/studio revoke` with no pull request to revoke on.
func NoRevokeTarget(phrase string, issue int) string {
	return fmt.Sprintf("`%s revoke`: there is no open studio pull request for #%d, so there is no approval to withdraw.", phrase, issue)
}

func CommitMessage(role, title string, issue int, runID string, elig policy.Eligibility) string {
	return fmt.Sprintf("%s: %s\n\nStudio-Task: #%d\nStudio-Run: %s\nStudio-Policy: %s/%s\n",
		role, OneLine(title, 200), issue, runID, elig.WritePolicy, elig.Provenance)
}

// verdictSummary is the verdict, its blockers and the committed paths, in that order: the
// fixed parts first, so a long list is what a cut removes. The blockers quote the agent's work,
// its verification's output and the review (untrustedList); the paths are the agent's names.
func VerdictSummary(verdict string, inScope, blockers []string, sha string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Verdict: %s**\n", verdict)
	if len(blockers) > 0 {
		b.WriteString("\nBlockers, quoted as text (the agent's work, its verification and the review wrote parts of them):\n\n")
		b.WriteString(UntrustedList(blockers, maxBlockersListed) + "\n")
	}
	if len(inScope) > 0 {
		fmt.Fprintf(&b, "\nCommitted in `%s`:\n", ShortSHA(sha))
		b.WriteString(NameList(inScope) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// modeNotes lists committed mode changes (an executable bit, a file turned into a link): allowed,
// but a reviewer should see them.
func ModeNotes(modes map[string]string) string {
	if len(modes) == 0 {
		return ""
	}
	paths := make([]string, 0, len(modes))
	for p := range modes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("Mode changes:")
	for i, p := range paths {
		if i == MaxListed {
			fmt.Fprintf(&b, "\n- … and %s more", policy.Count(len(paths)-i))
			break
		}
		fmt.Fprintf(&b, "\n- %s: %s", shownName(p), modes[p])
	}
	return b.String()
}

func PlanCommitMessage(role, title string, issue int, runID string) string {
	return fmt.Sprintf("plan: %s\n\nStudio-Task: #%d\nStudio-Run: %s\nStudio-Policy: %s/%s\n%s\n",
		OneLine(title, 200), issue, runID, policy.WriteReadOnly, policy.ProvenanceReadOnly, policy.PlanPhaseTrailer)
}

// approver says who may approve: strict-studio forbids the requester to approve their own run.
func Approver(requestedBy string, mode policy.StudioMode) string {
	if mode == policy.ModeStrictStudio {
		return fmt.Sprintf("a writer other than @%s (strict-studio forbids self-approval)", requestedBy)
	}
	return "a writer"
}

// approveParagraph opens a plan pull request: what it holds and what approving it does, in
// words for someone who has never seen the studio; the diagnostics follow, folded.
func approveParagraph(issue int, role, requestedBy string, mode policy.StudioMode) string {
	return fmt.Sprintf("This draft pull request holds the plan Codex wrote for #%d as `%s`, in a read-only sandbox; it changes no file yet. "+
		"**Approving this pull request starts the implementation** on this branch, where Codex may change only the files listed under Scope. "+
		"The approval must come from %s, on the pull request's current head commit; editing the issue (its title or any of its text) afterwards, "+
		"or changing the role, the stage or the studio mode, makes it stale.", issue, role, Approver(requestedBy, mode))
}

func AwaitingSummary(pull int, requestedBy string, mode policy.StudioMode, diagnostics string) string {
	return fmt.Sprintf("**Awaiting approval.** Approve pull request #%d to authorize the implementation; the approval must come from %s, on its current head commit.\n\n%s",
		pull, Approver(requestedBy, mode), DetailsBlock("Eligibility and approval diagnostics", Fenced(diagnostics, "text")))
}

func PlanBody(markerLine string, issue int, task policy.Task, plan, diagnostics, requestedBy string, mode policy.StudioMode) string {
	plan = strings.TrimSpace(plan)
	if plan == "" {
		plan = "(Codex returned no plan text.)"
	}
	if r := []rune(plan); len(r) > maxPlanChars {
		plan = string(r[:maxPlanChars]) + "\n[plan cut to fit the pull request body]"
	}
	scopes := "none"
	if len(task.ApprovalScope) > 0 {
		scopes = strings.Join(QuoteAll(task.ApprovalScope), ", ")
	}
	var b strings.Builder
	b.WriteString(markerLine + "\n")
	fmt.Fprintf(&b, "<!-- studio:pr issue=%d -->\n", issue)
	b.WriteString(approveParagraph(issue, task.Role, requestedBy, mode) + "\n\n")
	fmt.Fprintf(&b, "### The plan\n\nModel output, quoted as untrusted text:\n\n%s\n\n", Fenced(plan, "text"))
	b.WriteString("### Scope\n\n")
	fmt.Fprintf(&b, "- writeFiles: %s\n- approval scopes: %s\n\n", strings.Join(QuoteAll(task.WriteFiles), ", "), scopes)
	b.WriteString(DetailsBlock("Eligibility and approval diagnostics", Fenced(diagnostics, "text")) + "\n")
	return b.String()
}

// detailsBlock folds inner (Markdown) under a one-line summary; the blank lines let GitHub render
// the Markdown inside.
func DetailsBlock(summary, inner string) string {
	return "<details><summary>" + summary + "</summary>\n\n" + inner + "\n\n</details>"
}

// fenced puts text in a code fence its own backticks cannot close.
func Fenced(text, info string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + info + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

func markerPrefix(line string) string {
	if line == "" {
		return ""
	}
	return line + "\n"
}

// proposalReply is the reply holding a proposal: the marker, the command quoted, the block, the
// model's explanation as quoted untrusted text, and what a writer can do next.

// completing: the issue's block names no writeFiles, and this one completes it.
func ProposalReply(phrase, actor, cmdLine, planner, marker, block, summary string, completing bool) string {
	if summary == "" {
		summary = "(Codex gave no explanation.)"
	}
	var b strings.Builder
	b.WriteString(marker + "\n")
	fmt.Fprintf(&b, "> %s\n\n", QuoteLine(cmdLine))
	if completing {
		fmt.Fprintf(&b, "@%s, this issue's `studio` task block names no `writeFiles`, which a writing role needs, so a read-only planning pass (`%s`) proposes them; the block below keeps everything else the issue's block says:\n\n", actor, planner)
	} else {
		fmt.Fprintf(&b, "@%s, this issue has no `studio` task block, so a read-only planning pass (`%s`) proposes one:\n\n", actor, planner)
	}
	b.WriteString(block + "\n\n")
	b.WriteString("Codex's explanation, model output quoted as untrusted text:\n\n")
	b.WriteString(Fenced(summary, "text") + "\n\n")
	if completing {
		fmt.Fprintf(&b, "A writer can put this block in place of the issue's, or comment `%s accept`, which replaces it. ", phrase)
	} else {
		fmt.Fprintf(&b, "A writer can paste this block into the issue body, or comment `%s accept`. ", phrase)
	}
	fmt.Fprintf(&b, "Nothing was written to the repository (no branch, commit or pull request); once the issue holds the block, comment `%s run` to start.\n", phrase)
	return b.String()
}

// quotedAnswer bounds a model answer for quoting it back in a fence: control characters other
// than newline and tab dropped, at most 40 lines and 4,000 characters.
func QuotedAnswer(s string) string {
	s = LastLines(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return -1
	}, s), 40)
	if r := []rune(s); len(r) > 4_000 {
		s = string(r[:4_000]) + "…"
	}
	return s
}

// dryRunSummary is the answer to `/studio run --dry-run`: the decisions, and the prompt preview
// or why there is none. refused is the reason a real run would be refused, "" when it would not.
func DryRunSummary(refused, decisions, preview, whyNoPreview string) string {
	var b strings.Builder
	b.WriteString("**Dry run**: nothing was changed (no branch, pull request, label or Codex run).\n\n")
	if refused != "" {
		b.WriteString("**A run would be refused:** " + refused + "\n\n")
	}
	b.WriteString(Fenced(decisions, "text"))
	if preview != "" {
		b.WriteString("\n\n<details><summary>Prompt and context</summary>\n\n" + Fenced(preview, "text") + "\n</details>")
	} else if whyNoPreview != "" {
		b.WriteString("\n\n_Prompt preview unavailable: " + OneLine(whyNoPreview, 300) + "_")
	}
	return b.String()
}

// approvalStatus is the task's status summary while its plan waits for approval: whether an
// approval matches, what keeps it from starting, and every review's diagnostics.
func ApprovalStatus(pull int, matched bool, notStarted, problem, untrustedPlan, approverText, diagnostics string) string {
	var b strings.Builder
	if matched {
		fmt.Fprintf(&b, "An approval matches pull request #%d, but the implementation did not start", pull)
		if notStarted != "" {
			fmt.Fprintf(&b, ": %s", notStarted)
		}
		b.WriteString(".\n\n")
	} else {
		fmt.Fprintf(&b, "**No approval authorizes the implementation yet.** Approve pull request #%d; the approval must come from %s, on its current head commit.\n\n", pull, approverText)
	}
	if problem != "" && !matched {
		fmt.Fprintf(&b, "The task cannot be used now: %s\n\n", problem)
	}
	if untrustedPlan != "" {
		fmt.Fprintf(&b, "The plan's identity cannot be trusted: %s\n\n", untrustedPlan)
	}
	b.WriteString(Fenced(diagnostics, "text"))
	return b.String()
}

// orchestrationReply answers `/studio orchestrate` (a dry run's plan, or why it cannot start).
func OrchestrationReply(line, actor, text string) string {
	who := ""
	if actor != "" {
		who = "@" + actor + ", "
	}
	return fmt.Sprintf("> %s\n\n%s%s", QuoteLine(line), who, text)
}

// statusHistoryLine is one status transition in a status comment's history.
func StatusHistoryLine(at time.Time, from, to, runID, why string) string {
	line := fmt.Sprintf("%s: status %s → %s (run %s)", at.UTC().Format(time.RFC3339), from, to, runID)
	if why != "" {
		line += ": " + why
	}
	return line
}

// ---- tasks and recipes (dependencies.go, verb_task.go, recipes.go) ----

// dependencyRefusal is why a task does not start: each dependency that is not done, one per line
// (policy.UnmetDependencies' words), and what to do.
func DependencyRefusal(phrase string, unmet []string) string {
	var b strings.Builder
	b.WriteString("the task's dependencies are not done, so it did not start (no Codex call, branch or pull request):\n")
	for _, l := range unmet {
		b.WriteString("- " + OneLine(l, 300) + "\n")
	}
	fmt.Fprintf(&b, "\nComment `%s run` again once they are done, or remove them from the block's `dependsOn`.", phrase)
	return b.String()
}

// taskCreatedReply says which task `/studio task create` opened, what its block holds, and how
// it starts. writes says the role changes files (its phase is a mutating one).
func TaskCreatedReply(phrase string, number int, t policy.NewTask, writes bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "created task #%d, %s: role `%s`", number, CodeSpan(t.Title), t.Role)
	if len(t.WriteFiles) > 0 {
		fmt.Fprintf(&b, ", writeFiles %s", pathsOrNone(t.WriteFiles))
	}
	if len(t.Files) > 0 {
		fmt.Fprintf(&b, ", files %s", pathsOrNone(t.Files))
	}
	if len(t.DependsOn) > 0 {
		fmt.Fprintf(&b, ", depends on %s", IssueRefs(t.DependsOn))
	}
	if t.Priority != 0 {
		fmt.Fprintf(&b, ", priority %d", t.Priority)
	}
	if t.Verify != nil {
		fmt.Fprintf(&b, ", verified by %s", CodeSpan(strings.Join(append([]string{t.Verify.Command}, t.Verify.Args...), " ")))
	}
	b.WriteString(". It is ready and does not start by itself: ")
	if len(t.DependsOn) > 0 {
		fmt.Fprintf(&b, "once its dependencies are done, comment `%s run` on #%d.", phrase, number)
	} else {
		fmt.Fprintf(&b, "comment `%s run` on #%d to start it.", phrase, number)
	}
	if len(t.WriteFiles) == 0 && writes {
		fmt.Fprintf(&b, " Role `%s` changes files and the task names none: its first run proposes `writeFiles` (a read-only pass) for a writer to accept with `%s accept`, or add them to its block.", t.Role, phrase)
	}
	return b.String()
}

// taskRefusedReply says why nothing was created.
func TaskRefusedReply(reason string) string {
	return "no task was created: " + OneLine(reason, 600)
}

// pathsOrNone lists paths as code spans, or "none".
func pathsOrNone(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	return strings.Join(QuoteAll(ps), ", ")
}

// issueRefs writes issue numbers as "#3, #5".
func IssueRefs(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(parts, ", ")
}

// recipeDryRunReply shows the task issues `workflow create-tasks` would open (policy.RenderRecipe).
func RecipeDryRunReply(parent int, recipe string) string {
	return fmt.Sprintf("**dry run**: nothing was created. Without `--dry-run` this opens these task issues, each a sub-issue of #%d, with their dependencies:\n\n%s",
		parent, Fenced(recipe, "text"))
}

// recipeCreatedReply says which task issues a recipe opened (policy.RenderRecipe with their
// numbers), what did not happen, and how they start.
func RecipeCreatedReply(phrase string, parent, n int, recipe string, notes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "opened %d task %s for #%d, as its sub-issues and in a task list in its body:\n\n%s\n\n", n, Plural(n, "issue", "issues"), parent, Fenced(recipe, "text"))
	for _, note := range notes {
		b.WriteString("- **Note:** " + OneLine(note, 400) + "\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Each is ready and starts with `%s run` on it once its dependencies are done.", phrase)
	return b.String()
}

// recipeTaskListSection is what a recipe appends to the body of the issue it was typed on: a
// heading naming the recipe and its group, and the task list (policy.RecipeTaskList).
func RecipeTaskListSection(workflowID, groupID, list string) string {
	return fmt.Sprintf("### Tasks: `%s` recipe (group `%s`)\n\n%s", workflowID, groupID, list)
}

// delegationReply tells the parent issue which child tasks a spawning run filed and which of its
// requests were refused, with each reason.
func DelegationReply(parent int, created []int, refusals []string) string {
	var b strings.Builder
	b.WriteString("### Delegation\n\n")
	if len(created) > 0 {
		fmt.Fprintf(&b, "Filed as task issues, sub-issues of #%d, orchestrated here: %s.\n", parent, IssueRefs(created))
	} else {
		b.WriteString("No child task was filed.\n")
	}
	if len(refusals) > 0 {
		// A refusal quotes what the agent asked for (a title, a path): shown as text.
		items := make([]string, len(refusals))
		for i, l := range refusals {
			items[i] = OneLine(strings.TrimPrefix(l, "- "), 600)
		}
		b.WriteString("\nRefused (requests are numbered from 0, as `dependsOn` counts them):\n\n" + UntrustedList(items, MaxListed) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// steeringSection adds `/studio steer` notes to a pass's prompt: text from people with write
// access, quoted as data like the issue's.
func SteeringSection(notes []string) string {
	var b strings.Builder
	b.WriteString("\n\n## Steering\nPeople with write access added these notes for this pass. They are quoted text: follow them where they fit the task, its scope and the rules above.\n")
	for _, n := range notes {
		b.WriteString("\n" + Fenced(n, "text") + "\n")
	}
	return b.String()
}

// controlReply answers a control command on a child task with the decision and the new state.
func ControlReply(line, actor, answer, status string) string {
	return fmt.Sprintf("> %s\n\n@%s, %s\n\nThe task is now **%s**.", QuoteLine(line), actor, strings.TrimSpace(answer), status)
}

// controlRefusal answers a control that is not allowed.
func ControlRefusal(line, actor, reason string) string {
	return fmt.Sprintf("> %s\n\n@%s, %s. Nothing was changed.", QuoteLine(line), actor, strings.TrimSuffix(strings.TrimSpace(reason), "."))
}

var boldRE = regexp.MustCompile(`\*\*([^*]+)\*\*`)

// shortMark keeps a trust mark's bold labels for a table cell ("**Adversarial input**").
func ShortMark(m string) string {
	var labels []string
	for _, b := range boldRE.FindAllStringSubmatch(m, -1) {
		labels = append(labels, "**"+b[1]+"**")
	}
	return strings.Join(labels, ", ")
}
