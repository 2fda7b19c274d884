package bot

import (
	"context"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

// `/studio continue [text]` on a task issue goes on with the task in the agent's kept thread
// (bot/threads): a run like `/studio run`, whose implementation resumes the conversation the last
// run kept, with the writer's text as the next input. On a delegated child it is the profile's
// control (verb_control.go): the paused child is ready again.

// ContinueOptions are `continue`'s: the writer's text ("" for none) and `run`'s flags.
type ContinueOptions struct {
	Text string
	RunOptions
}

// parseContinueOptions takes `run`'s flags (parseRunOptions), and every other word as the text.
func parseContinueOptions(args []string) (any, error) {
	var flags, words []string
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			flags = append(flags, a)
		} else {
			words = append(words, a)
		}
	}
	o, err := parseRunOptions(flags)
	if err != nil {
		return nil, err
	}
	return ContinueOptions{Text: strings.Join(words, " "), RunOptions: o.(RunOptions)}, nil
}

func init() {
	register(&verb{
		name: policy.ControlContinue, order: 62, args: "[text]", flags: []string{"--approved-by-user", "--dry-run", "--fresh"}, where: "on a task issue",
		what:      "goes on with the task in the agent's kept conversation (the app-server engine keeps it after every run, also a stopped, paused or cut-off one), with the text as the agent's next input; a run in every other way. On a paused delegated child, along the profile's control graph, it makes the child ready again",
		parse:     parseContinueOptions,
		needsBase: true,
		onIssue: func(ctx context.Context, r *run) error {
			parent, err := r.ev.gh.ParentIssue(ctx, r.tr.Issue)
			if err != nil {
				return err
			}
			if parent != 0 {
				return r.control(ctx, policy.ControlContinue)
			}
			return r.execute(ctx)
		},
	})
}
