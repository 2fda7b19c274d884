package status

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// GitHub refuses comment bodies over this many characters (422 "body is too long").
const MaxCommentChars = policy.MaxBodyChars

// statusMarker identifies the one status comment per issue, so every step edits it in place.
func StatusMarker(issue int) string { return fmt.Sprintf("<!-- studio:status issue=%d -->", issue) }

// IsStatusComment says whether body is the bot's status comment of issue (its marker), for the
// local printer, which keeps that comment but does not print it.
func IsStatusComment(issue int, body string) bool {
	return strings.Contains(body, StatusMarker(issue))
}

var handledMarker = regexp.MustCompile(`<!-- studio:handled ([0-9,]*) -->`)

// Step is one line of the status checklist.
type Step struct {
	Name   string
	State  StepState
	Detail string
}

type StepState int

const (
	StepPending StepState = iota
	StepDone
	StepFailed
	StepSkipped
)

// Status is the content of the status comment.
type Status struct {
	Issue   int
	Steps   []Step
	Verdict string // done | blocked | refused | "" while running
	Summary string // markdown under the checklist
	RunURL  string
	Handled []int64 // comment ids this bot has already acted on
	// Deliveries are the webhook deliveries (X-GitHub-Delivery) studio serve dispatched for
	// events without a comment to record (a role label, an approval), the latest last.
	Deliveries []string
	// Containment is a markdown line on how the agent is confined (Settings.Containment).
	Containment string
	// Network is a markdown line on what the agent's network reaches (networkLine).
	Network string
	// Usage is the line on the tokens this run's Codex calls used (codex.UsageLine); empty
	// before the first call.
	Usage string
	// Thread is the section on the agent's kept thread and the task's chain of runs
	// (texts.ThreadKept); empty when the engine keeps none.
	Thread string
	// ThreadKept records that a run kept the agent's thread under the task's thread ref, so a
	// later run looks for it (and one of a task that never kept one spends no request on it).
	ThreadKept bool

	// The run that writes the comment (status_run.go): its id and attempt, when its lock
	// expires, the history of earlier runs' ends, and Ended once it finished without a verdict.
	RunID, Attempt string
	Expires        time.Time
	History        []string
	Ended          bool
	// Steer are the notes `/studio steer` left for the task's next pass, kept hidden in the
	// comment until a run uses them.
	Steer []string
}

// Step names, in the order the checklist shows them.
const (
	StepAuthorized = "Authorized"
	StepTaskParsed = "Task parsed"
	StepCodex      = "Codex running"
	StepCommitted  = "Changes committed"
	StepPull       = "Pull request opened"
	StepVerdict    = "Verdict"
)

func NewStatus(issue int, runURL string, handled []int64) *Status {
	s := &Status{Issue: issue, RunURL: runURL, Handled: handled}
	for _, n := range []string{StepAuthorized, StepTaskParsed, StepCodex, StepCommitted, StepPull, StepVerdict} {
		s.Steps = append(s.Steps, Step{Name: n})
	}
	return s
}

func (s *Status) Detail(name string) string {
	for _, st := range s.Steps {
		if st.Name == name {
			return st.Detail
		}
	}
	return ""
}

func (s *Status) Set(name string, state StepState, detail string) {
	for i := range s.Steps {
		if s.Steps[i].Name == name {
			s.Steps[i].State, s.Steps[i].Detail = state, detail
		}
	}
}

// Render produces the comment body. It never exceeds GitHub's limit: an over-long summary is cut
// with a visible note pointing at the workflow run.
func (s *Status) Render() string {
	var b strings.Builder
	b.WriteString(StatusMarker(s.Issue) + "\n")
	fmt.Fprintf(&b, "### Codex Studio: task #%d\n\n", s.Issue)
	for _, st := range s.Steps {
		box := map[StepState]string{StepPending: "[ ]", StepDone: "[x]", StepFailed: "[ ] :x:", StepSkipped: "[ ] (skipped)"}[st.State]
		line := fmt.Sprintf("- %s %s", box, st.Name)
		if st.Detail != "" {
			line += ": " + st.Detail
		}
		b.WriteString(line + "\n")
	}
	if s.Usage != "" {
		fmt.Fprintf(&b, "\n%s\n", s.Usage)
	}
	if s.Thread != "" {
		fmt.Fprintf(&b, "\n%s\n", s.Thread)
	}
	if s.Containment != "" {
		fmt.Fprintf(&b, "\n%s\n", s.Containment)
	}
	if s.Network != "" {
		fmt.Fprintf(&b, "\n%s\n", s.Network)
	}
	if s.RunURL != "" {
		fmt.Fprintf(&b, "\n[Workflow run](%s)\n", s.RunURL)
	}
	tail := "\n" + recordLine + s.RenderRun() + "\n" + handledLine(s.Handled) + "\n" + deliveriesLine(s.Deliveries)
	if s.Summary != "" {
		// The summary gives way, so the markers in the tail always survive.
		room := policy.MaxBodyChars - utf8.RuneCountInString(b.String()) - utf8.RuneCountInString(tail) - 2
		b.WriteString("\n" + texts.FitClosed(s.Summary, policy.NoteCutJobSummary, room) + "\n")
	}
	b.WriteString(tail)
	return b.String()
}

func handledLine(ids []int64) string {
	sorted := append([]int64(nil), ids...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	parts := make([]string, len(sorted))
	for i, id := range sorted {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return "<!-- studio:handled " + strings.Join(parts, ",") + " -->"
}

// maxDeliveries bounds the deliveries a status comment remembers: a re-delivery comes within
// hours of the original, not after dozens of later dispatches of the same task.
const maxDeliveries = 20

var deliveriesMarker = regexp.MustCompile(`<!-- studio:deliveries ([0-9A-Za-z,-]*) -->`)

// deliveriesLine is the hidden record of Deliveries, absent when there are none (so every status
// comment of the Action reads as before).
func deliveriesLine(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	kept := make([]string, 0, len(ids))
	for _, id := range ids {
		if DeliveryID(id) {
			kept = append(kept, id)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	if len(kept) > maxDeliveries {
		kept = kept[len(kept)-maxDeliveries:]
	}
	return "<!-- studio:deliveries " + strings.Join(kept, ",") + " -->\n"
}

// deliveryID says whether id is a delivery id as GitHub writes them (a GUID): nothing else enters
// the marker.
func DeliveryID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-') {
			return false
		}
	}
	return true
}

// parseDeliveries reads the deliveries a status comment says were dispatched.
func ParseDeliveries(body string) []string {
	record, _ := ownRecord(body)
	m := deliveriesMarker.FindStringSubmatch(record)
	if m == nil || m[1] == "" {
		return nil
	}
	return strings.Split(m[1], ",")
}

// parseHandled reads the comment ids a status comment says were handled.
func ParseHandled(body string) []int64 {
	record, _ := ownRecord(body)
	m := handledMarker.FindStringSubmatch(record)
	if m == nil {
		return nil
	}
	var ids []int64
	for _, f := range strings.Split(m[1], ",") {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// findStatusComment returns the bot's status comment for issue. Only comments written by the bot
// count: anyone can paste a marker into their own comment to fake "already handled".
func FindStatusComment(comments []hub.Comment, issue int, botLogin string) (hub.Comment, bool) {
	marker := StatusMarker(issue)
	for _, c := range comments {
		if strings.EqualFold(c.Author, botLogin) && strings.HasPrefix(c.Body, marker) {
			return c, true
		}
	}
	return hub.Comment{}, false
}

func ContainsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
