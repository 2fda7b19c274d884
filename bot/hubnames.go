package bot

import "github.com/codex-studio/studio-action/bot/hub"

// The domain types and errors are the adapter's (bot/hub): it converts go-github's types to them
// at the boundary. The flow speaks of them by their plain names, as it did before the adapter
// moved out, so these are aliases, not copies: a hub.Issue is an Issue.
type (
	Comment       = hub.Comment
	Issue         = hub.Issue
	PullRequest   = hub.PullRequest
	NewPull       = hub.NewPull
	Review        = hub.Review
	CheckRun      = hub.CheckRun
	CommitStatus  = hub.CommitStatus
	PullCommit    = hub.PullCommit
	NewReview     = hub.NewReview
	InlineComment = hub.InlineComment
	NewIssue      = hub.NewIssue
	RefEntry      = hub.RefEntry
)

// The errors the flow acts on; the same values as hub's, so errors.Is matches either name.
var (
	ErrNotFound      = hub.ErrNotFound
	ErrForbidden     = hub.ErrForbidden
	ErrUnprocessable = hub.ErrUnprocessable
	ErrRefExists     = hub.ErrRefExists
	ErrRefMoved      = hub.ErrRefMoved
)

// DefaultBotLogin is the login the Actions token writes as.
const DefaultBotLogin = hub.DefaultBotLogin

// Explain turns a failure into something a user can act on (hub.Explain, which knows GitHub's
// refusals).
func Explain(err error) string { return hub.Explain(err) }
