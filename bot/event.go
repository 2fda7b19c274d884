package bot

import (
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy"
	"github.com/google/go-github/v60/github"
)

// TriggerKind says what started a run.
type TriggerKind string

const (
	TriggerComment TriggerKind = "comment"
	TriggerLabel   TriggerKind = "label"
	// TriggerPullRequest and TriggerReview drive the approval flow and the gate (pull_event.go).
	TriggerPullRequest TriggerKind = "pull_request"
	TriggerReview      TriggerKind = "review"
)

// Actor is who caused the event.
type Actor struct {
	Login string
	Type  string // "User", "Bot" or "Organization", as GitHub reports it
}

// Trigger is a decoded event the bot will act on.
type Trigger struct {
	Kind        TriggerKind
	Owner, Repo string
	// DefaultBranch is the payload's repository.default_branch, so no API call asks for it.
	DefaultBranch string
	Issue         int
	IsPull        bool
	Actor         Actor
	// Snapshot is the issue as the payload delivered it. The run uses this text, not a later
	// fetch, so an edit made after the trigger cannot change what the authorized person asked for.
	Snapshot Issue
	// Comment fields (TriggerComment).
	CommentID   int64
	CommentBody string
	// Label fields (TriggerLabel).
	Label string
	// Pull fields (TriggerPullRequest, TriggerReview).
	Pull PullEvent
}

// Skip explains why an event needs no work; the bot logs it so every skipped event has a line.
type Skip struct{ Reason string }

func (s *Skip) Error() string { return "skipped: " + s.Reason }

// DecodeEvent turns an Actions event into a Trigger, or a *Skip saying why there is nothing to do.
// Only the payload's own fields are used: the comment body is the one GitHub delivered, so an edit
// made after the trigger cannot change what runs.
func DecodeEvent(eventName string, payload []byte) (Trigger, error) {
	ev, err := github.ParseWebHook(eventName, payload)
	if err != nil {
		return Trigger{}, &Skip{Reason: fmt.Sprintf("event %q is not handled (%v)", eventName, err)}
	}
	switch e := ev.(type) {
	case *github.IssueCommentEvent:
		snap := snapshot(e.GetIssue())
		if e.GetAction() != "created" {
			return Trigger{}, &Skip{Reason: fmt.Sprintf("issue_comment %s: only new comments are commands; an edited or deleted comment never triggers a run", e.GetAction())}
		}
		return Trigger{
			Kind: TriggerComment, Owner: e.GetRepo().GetOwner().GetLogin(), Repo: e.GetRepo().GetName(),
			DefaultBranch: e.GetRepo().GetDefaultBranch(),
			Issue:         e.GetIssue().GetNumber(), IsPull: e.GetIssue().IsPullRequest(),
			Actor:     Actor{Login: e.GetSender().GetLogin(), Type: e.GetSender().GetType()},
			CommentID: e.GetComment().GetID(), CommentBody: e.GetComment().GetBody(),
			Snapshot: snap,
		}, nil
	case *github.IssuesEvent:
		if e.GetAction() != "labeled" {
			return Trigger{}, &Skip{Reason: fmt.Sprintf("issues %s: only an added label starts a run", e.GetAction())}
		}
		return Trigger{
			Kind: TriggerLabel, Owner: e.GetRepo().GetOwner().GetLogin(), Repo: e.GetRepo().GetName(),
			DefaultBranch: e.GetRepo().GetDefaultBranch(),
			Issue:         e.GetIssue().GetNumber(), IsPull: e.GetIssue().IsPullRequest(),
			Actor: Actor{Login: e.GetSender().GetLogin(), Type: e.GetSender().GetType()},
			Label: e.GetLabel().GetName(), Snapshot: snapshot(e.GetIssue()),
		}, nil
	case *github.PullRequestEvent:
		return decodePullRequestEvent(e)
	case *github.PullRequestReviewEvent:
		return decodeReviewEvent(e)
	}
	return Trigger{}, &Skip{Reason: fmt.Sprintf("event %q is not handled by this version", eventName)}
}

// Command is a parsed slash command.
type Command struct {
	Line string   // the command line as written, for quoting back
	Verb string   // run, accept, revoke, review or help; "" when the line names no verb
	Run  RunFlags // the flags of `run`; always zero for the other verbs
	// Err is a usage error (an unknown verb, flag or argument) to reply with. A command with an
	// error must not act: nothing may change because of it, and it never counts as a revoke.
	Err error
}

// RunFlags are the flags `run` takes.
type RunFlags struct {
	ApprovedByUser bool // --approved-by-user
	DryRun         bool // --dry-run
}

// verbSpec is one verb: its flags, where it works and what it does (the usage line and
// `/studio help` are both written from it).
type verbSpec struct {
	name  string
	flags []string
	where string // where the verb works
	what  string // one line of what it does, for help
}

// verbs lists every verb the bot handles; each parses only its own flags.
var verbs = []verbSpec{
	{name: "run", flags: []string{"--approved-by-user", "--dry-run"}, where: "on a task issue",
		what: "runs Codex on the issue's `studio` task block (implement, verify, review, fix passes) and opens a pull request; `--dry-run` only shows the decisions, `--approved-by-user` is a writer's approval where the studio mode accepts one. On an issue without a task block it runs a read-only planning pass that proposes one"},
	{name: "accept", where: "on an issue without a task block",
		what: "appends the task block the studio last proposed on the issue to its body; it does not start a run"},
	{name: "revoke", where: "on a task issue or its studio pull request",
		what: "withdraws the approvals given so far and recomputes the `studio/gate` check"},
	{name: "review", where: "on a studio pull request",
		what: "reviews the pull request's head commit again and posts the verdict"},
	{name: "help", where: "on any issue or pull request",
		what: "lists these commands; anyone may ask, and nothing else changes"},
}

// CommandError is a usage error: what was wrong and how the command is written.
type CommandError struct {
	Problem string // already quoted for Markdown
	Usage   string
}

func (e *CommandError) Error() string { return e.Problem + " " + e.Usage }

func usageOf(phrase string, v verbSpec) string {
	var flags string
	for _, f := range v.flags {
		flags += " [" + f + "]"
	}
	where := v.where
	if len(v.flags) == 0 {
		where += "; takes no flags"
	}
	return fmt.Sprintf("Usage: `%s %s%s` (%s).", phrase, v.name, flags, where)
}

// HelpText is the answer to `/studio help`: every verb of the table with its flags, where it
// works and what it does.
func HelpText(phrase string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The commands, each at the start of a line of its own:\n\n")
	for _, v := range verbs {
		var flags string
		for _, f := range v.flags {
			flags += " [" + f + "]"
		}
		fmt.Fprintf(&b, "- `%s %s%s` (%s): %s.\n", phrase, v.name, flags, v.where, v.what)
	}
	b.WriteString("\n`run`, `accept`, `revoke` and `review` need write, maintain or admin permission on the repository.")
	return b.String()
}

func verbList(phrase string) string {
	var names []string
	for _, v := range verbs {
		names = append(names, fmt.Sprintf("`%s %s`", phrase, v.name))
	}
	return "The commands are " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + "."
}

// ParseCommand finds the first line of visible text in body that starts with the trigger phrase
// and parses it. Only what a person typed counts (policy.ScanMarkdown): a line in a code block,
// inline code, a blockquote, a list item, an HTML comment or a <details> block is never a
// command, and the phrase must match exactly in ASCII (case-insensitively), so a fullwidth or
// Cyrillic look-alike, a zero-width character or a non-breaking space never triggers. ok is false
// when the body has no such line, so discussion mentioning "/studio" mid-sentence never triggers.
// A line that is found but malformed comes back with Err set.
func ParseCommand(body, phrase string) (cmd Command, ok bool) {
	if phrase == "" {
		return Command{}, false
	}
	for _, l := range policy.ScanMarkdown(body).Lines {
		fields := asciiFields(l.Text)
		if len(fields) == 0 || !policy.ASCIIEqualFold(fields[0], phrase) {
			continue
		}
		return parseCommandFields(l.Text, fields[1:], phrase), true
	}
	return Command{}, false
}

func parseCommandFields(line string, args []string, phrase string) Command {
	cmd := Command{Line: line}
	if len(args) == 0 {
		cmd.Err = &CommandError{Problem: fmt.Sprintf("`%s` needs a command.", phrase), Usage: verbList(phrase)}
		return cmd
	}
	verb := strings.ToLower(args[0])
	var spec *verbSpec
	for i := range verbs {
		if verbs[i].name == verb {
			spec = &verbs[i]
		}
	}
	if spec == nil {
		cmd.Err = &CommandError{Problem: fmt.Sprintf("%s is not a command.", codeSpan(args[0])), Usage: verbList(phrase)}
		return cmd
	}
	cmd.Verb = spec.name
	var run RunFlags
	for _, a := range args[1:] {
		switch f := strings.ToLower(a); {
		case spec.name == "run" && f == "--approved-by-user":
			run.ApprovedByUser = true
		case spec.name == "run" && f == "--dry-run":
			run.DryRun = true
		default:
			what := "flag"
			if !strings.HasPrefix(a, "-") {
				what = "argument"
			}
			cmd.Err = &CommandError{Problem: fmt.Sprintf("`%s %s` does not take the %s %s.", phrase, spec.name, what, codeSpan(a)), Usage: usageOf(phrase, *spec)}
			return cmd
		}
	}
	cmd.Run = run
	return cmd
}

// asciiFields splits on ASCII spaces and tabs only: a non-breaking or other Unicode space is part
// of a word, so "/studio\u00a0run" is not the phrase followed by a verb.
func asciiFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}

// codeSpan quotes untrusted text as inline code that it cannot close, on one bounded line.
func codeSpan(s string) string {
	s = oneLine(s, 100)
	fence := strings.Repeat("`", longestBacktickRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func longestBacktickRun(s string) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

func snapshot(is *github.Issue) Issue {
	out := Issue{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), IsPull: is.IsPullRequest()}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}
