package bot

import (
	"context"
	"strings"
)

// `run` on a task issue: the task block through the studio lifecycle (execute), or, on an issue
// without a task block, a read-only planning pass that proposes one (proposal.go).

// RunOptions are the flags `run` takes.
type RunOptions struct {
	ApprovedByUser bool // --approved-by-user
	DryRun         bool // --dry-run
	// Fresh (--fresh) starts a new thread even where the task's kept one would be resumed.
	Fresh bool
}

func parseRunOptions(args []string) (any, error) {
	var o RunOptions
	for _, a := range args {
		switch strings.ToLower(a) {
		case "--approved-by-user":
			o.ApprovedByUser = true
		case "--dry-run":
			o.DryRun = true
		case "--fresh":
			o.Fresh = true
		default:
			return nil, &unexpectedArgError{Arg: a}
		}
	}
	return o, nil
}

// runOptions are a command's `run` options (a workflow's run takes them too; zero for any other
// verb).
func (c Command) runOptions() RunOptions {
	switch o := c.Opts.(type) {
	case RunOptions:
		return o
	case WorkflowOptions:
		return o.RunOptions
	case ContinueOptions:
		return o.RunOptions
	}
	return RunOptions{}
}

func init() {
	register(&verb{
		name: "run", order: 10, served: func(opts any) bool { return Command{Opts: opts}.runOptions().DryRun }, flags: []string{"--approved-by-user", "--dry-run", "--fresh"}, where: "on a task issue",
		what:      "runs Codex on the issue's `studio` task block (implement, verify, review, fix passes) and opens a pull request; `--dry-run` only shows the decisions, `--approved-by-user` is a writer's approval where the studio mode accepts one, `--fresh` starts a new agent conversation where the last run's kept one would go on. On an issue without a task block it runs a read-only planning pass that proposes one",
		parse:     parseRunOptions,
		needsBase: true,
		onIssue:   func(ctx context.Context, r *run) error { return r.execute(ctx) },
	})
}
